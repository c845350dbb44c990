"""Test configuration: puts tests/ on sys.path so test files can import tiny_fixtures."""
