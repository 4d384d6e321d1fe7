#!/bin/bash
# Stands in for a test whose tool is missing: a test that cannot run must fail, not pass.
echo "cannot run this test: $1 is not installed (tools/deps.sh installs it)" >&2
exit 1
