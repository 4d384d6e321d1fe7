#!/usr/bin/python3
"""Build reStructuredText files with docutils, as the kernel's documentation
build would parse them, and fail on any warning or error.

usage: check-rst.py FILE.rst...
"""
import io
import sys

try:
    import docutils.core
except ImportError:
    print("FAIL docutils is missing: apt-get install python3-docutils")
    sys.exit(1)


def check(path):
    messages = io.StringIO()
    with open(path, encoding="utf-8") as f:
        source = f.read()
    docutils.core.publish_string(
        source,
        source_path=path,
        writer_name="html",
        settings_overrides={
            "_disable_config": True,  # no docutils.conf from the environment
            "report_level": 2,  # warnings and worse
            "halt_level": 5,  # never stop: report every problem
            "warning_stream": messages,
        },
    )
    return messages.getvalue()


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip())
        return 2
    bad = 0
    for path in sys.argv[1:]:
        out = check(path)
        if out:
            print(f"FAIL {path}:\n{out}")
            bad = 1
        else:
            print(f"ok   {path}")
    return bad


if __name__ == "__main__":
    sys.exit(main())
