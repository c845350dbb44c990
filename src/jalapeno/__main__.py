"""``python -m jalapeno ...`` runs the command line, as the ``jalapeno`` script does (the same
entry point: user errors become one line and exit code 2)."""

from jalapeno.cli.app import main

if __name__ == "__main__":
    main()
