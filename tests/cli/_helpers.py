"""What every bad-input test of the command line checks."""

from sapwood.cli import main


def run_bad(capsys, argv, *phrases):
    """Run ``sapwood argv`` in-process and check it failed as a user should see it: exit
    code 2, nothing on stdout, one line on stderr starting ``sapwood: error:`` with
    every phrase in it, no traceback. Returns that line."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("sapwood: error: ")
    assert "Traceback" not in err
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]
