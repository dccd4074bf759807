#!/bin/sh
# Instructions per operation of one request_ops.py operation: count.sh --ops (see there).
# Usage: benchmarks/python/count_ops.sh NAME [N]
exec sh "$(dirname "$0")/count.sh" --ops "$@"
