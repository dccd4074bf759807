#!/bin/sh
# A venv for the Python tests: `PYTHON -m venv DIR`, then Tests/requirements.txt into it.
# DIR/ready is written last, so an interrupted set-up is redone by the next `make test`.
# Usage: sh Tests/setup/venv.sh PYTHON DIR
set -u
python=$1 dir=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
requirements=$root/Tests/requirements.txt
mkdir -p "$(dirname "$dir")"
rm -f "$dir/ready"
if ! "$python" -m venv --clear "$dir" > "$dir.log" 2>&1; then
    echo "cannot make a venv with $python ($(tail -n 3 "$dir.log" | tr '\n' ' ')); on Debian: apt-get install python3-venv" >&2
    exit 1
fi
echo "make test: installing Tests/requirements.txt into $dir ($("$dir/bin/python" --version 2>&1))"
if ! "$dir/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements" >> "$dir.log" 2>&1; then
    tail -n 15 "$dir.log" >&2
    echo "pip could not install $requirements into $dir (is PyPI reachable? a proxy: set PIP_INDEX_URL or" \
         "HTTPS_PROXY): the Python suite cannot run. Log: $dir.log" >&2
    exit 1
fi
rm -f "$dir.log"
touch "$dir/ready"
