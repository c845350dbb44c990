"""Round 37 leftovers of newuser37 (newuser37b): options and file keys that were ignored or misread without a word."""

from __future__ import annotations

import json

from cli_runner import run


def test_requests_past_a_short_trace_is_said(capsys, tmp_path):
    """simulate -n 5 on a 1-request trace replayed 1 and said nothing: a note names --requests and the trace's count."""
    f = tmp_path / "one.csv"
    f.write_text("arrival_s,input_tokens,output_tokens\n0,512,64\n")
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-w", str(f), "-n", "5",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["summary"]["requests"] == 1
    assert ("note: --requests 5 asks for more than the trace holds (1 request); the run replays the trace once: "
            "1 request, not 5") in err
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-w", str(f), "-n", "1",
                         "--json")
    assert code == 0, err
    assert "--requests" not in err  # exactly the trace's count: nothing to say
