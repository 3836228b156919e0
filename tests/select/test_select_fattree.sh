#!/bin/bash
# select/topoml vs stock cons_tres on a fat-tree of 1024 emulated nodes.
export FAMILY=fat-tree
. "${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}/select/stock_compare_lib.sh"
