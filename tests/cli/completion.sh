#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Run by test_cli_topology.sh (its bash completion part): checks
# contrib/bash-completion/topoml against the topoml binary and its parsers,
# so that the two cannot drift apart again.  For every command, the options
# the completion offers after "--" are exactly those of the command's getopt
# table (contrib/cmd_*.c), every long option `topoml CMD --help` names that
# the parser accepts is offered, and every parser option is in --help; also
# the command list, the policy names and a few option values.  The
# completion runs in this bash with the real bash-completion library when
# installed, else with minimal stand-ins for its two helpers.  Exit 0, or 1
# with a FAIL line per problem.
src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bld=${TOP_BUILDDIR:-$src/build}
topoml=$bld/contrib/topoml
comp=$src/contrib/bash-completion/topoml
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
[ -x "$topoml" ] || { echo "FAIL: no $topoml (build first)"; exit 1; }

if [ -r /usr/share/bash-completion/bash_completion ]; then
	. /usr/share/bash-completion/bash_completion
	echo "# with /usr/share/bash-completion/bash_completion"
else
	# what the completion uses of bash-completion
	_init_completion() {
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
	}
	_filedir() { COMPREPLY+=($(compgen -f -- "$cur")); }
	echo "# bash-completion not installed: stand-ins for its helpers"
fi
. "$comp" || { echo "FAIL: cannot source $comp"; exit 1; }
complete -p topoml >/dev/null 2>&1 || { echo "FAIL: no completion for topoml"; exit 1; }
# file names are completed from here: a short, known listing
cd "$src/contrib/examples" || exit 1

# The words offered for the command line "$@" (the last word is the one
# being completed), sorted, one a line.
offered() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_LINE=${COMP_LINE// = /=}	# the words of "--opt=value"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_topoml topoml "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sort -u | sed '/^$/d'
}

# Long options of each command's getopt table, from the sources: a table
# belongs to the "int cmd_NAME(" it is in, else (a helper's table) to the
# one cmd_ function of its file.
parser_opts() {
	awk -v want="$1" '
		function flush() {
			if (nfile == 1)
				for (i = 1; i <= nloose; i++)
					if (cmd1 == want) print loose[i]
			nfile = 0; nloose = 0
		}
		FNR == 1 { flush(); name = ""; intab = 0 }
		/^[a-z].*\(/ {
			name = ""
			if (match($0, /^int cmd_[a-z_]+\(/)) {
				name = substr($0, 9, RLENGTH - 9)
				gsub(/_/, "-", name); cmd1 = name; nfile++
			}
		}
		/static const struct option/ { intab = 1 }
		intab && /\{ NULL/ { intab = 0 }
		intab && /CLI_COMMON_OPTS/ { opt("--progress"); opt("--quiet") }
		intab && match($0, /\{ "[a-z0-9-]+", *(no|required|optional)_argument/) {
			s = substr($0, RSTART + 3); sub(/".*/, "", s); opt("--" s)
		}
		function opt(o) {
			if (name == want) print o
			else if (name == "") loose[++nloose] = o
		}
		END { flush() }' "$src"/contrib/cmd_*.c | sort -u
}

# The long options CMD's --help names that its parser does not refuse as
# unknown (the rest is prose, such as srun's --ml-parallel).
help_opts() {
	local cmd=$1 o out
	for o in $("$topoml" "$cmd" --help | grep -o -- '--[a-z][a-z0-9-]*' |
		   sort -u); do
		[ "$o" = --help ] && { echo "$o"; continue; }
		out=$(timeout 20 "$topoml" "$cmd" $( [ "$cmd" = generate ] &&
			echo fat-tree) "$o" </dev/null 2>&1 >/dev/null)
		case $out in
		*"unrecognized option"* | *"ambiguous"*) ;;
		*) echo "$o" ;;
		esac
	done
}

# --- commands
want=$("$topoml" --help | sed -n 's/^  \([a-z-]*\) .*/\1/p' | sort)
got=$(offered topoml "" | grep -v '^-')
[ -n "$want" ] && [ "$want" = "$got" ] ||
	fail "commands: topoml --help has [$(echo $want)], completion [$(echo $got)]"
for o in --help --version -V; do
	offered topoml - | grep -qx -- "$o" || fail "$o not offered as the first word"
done

# topoml help COMMAND completes the commands
[ "$(offered topoml help "" | sort)" = "$(echo "$want" | grep -vx help)" ] ||
	fail "help: the completion does not offer the commands: $(offered topoml help "")"

# --- options of each command
for cmd in $(echo "$want" | grep -vx help); do
	p=$(parser_opts "$cmd")
	[ "$(echo "$p" | wc -l)" -ge 4 ] ||
		{ fail "$cmd: no getopt table found in contrib/cmd_*.c"; continue; }
	h=$(help_opts "$cmd")
	if [ "$cmd" = generate ]; then
		c=$(offered topoml generate fat-tree --)
	else
		c=$(offered topoml "$cmd" --)
	fi
	missing=$(comm -23 <(echo "$p") <(echo "$c"))
	[ -z "$missing" ] ||
		fail "$cmd: the parser takes, the completion does not offer: $(echo $missing)"
	extra=$(comm -13 <(echo "$p") <(echo "$c"))
	[ -z "$extra" ] ||
		fail "$cmd: the completion offers, the parser refuses: $(echo $extra)"
	missing=$(comm -23 <(echo "$h") <(echo "$c"))
	[ -z "$missing" ] ||
		fail "$cmd: --help names, the completion does not offer: $(echo $missing)"
	# --help itself, and --quiet shown as -q, need not be spelled out
	undoc=$(comm -23 <(echo "$p" | grep -vx -- '--help\|--quiet') <(echo "$h"))
	[ -z "$undoc" ] ||
		fail "$cmd: the parser takes, --help does not name: $(echo $undoc)"
	echo "# $cmd: $(echo "$c" | wc -l) options offered, $(echo "$p" | wc -l) in the parser"
done

# --- values
pols=$("$topoml" place --help | sed -n 's/.*(P: \(.*\))$/\1/p' | tr -d ' ' |
       tr , '\n' | sort)
got=$(offered topoml sim --policy "")
[ -n "$pols" ] && [ "$pols" = "$got" ] ||
	fail "policies: place --help has [$(echo $pols)], completion [$(echo $got)]"
# sim takes a comma list
offered topoml sim -p topoml,slurm-b | grep -qx 'topoml,slurm-block' ||
	fail "sim -p topoml,slurm-b: not completed to topoml,slurm-block"
# --policy=VALUE (bash splits at '='; the stand-ins do not split)
if [ -n "${BASH_COMPLETION_VERSINFO:-}" ]; then
	offered topoml place --policy = slurm-b | grep -qx slurm-block ||
		fail "place --policy=slurm-b: not completed to slurm-block"
fi
# short options mean different things per command
[ "$(offered topoml place -H a)" = "$(printf 'allreduce\nalltoall')" ] ||
	fail "place -H is --hint: [$(offered topoml place -H a)]"
[ "$(offered topoml sim -s "")" = fit ] ||
	fail "sim -s is --scale: [$(offered topoml sim -s "")]"
[ -z "$(offered topoml sim --box-wait "")" ] ||
	fail "sim --box-wait SECONDS: offered [$(offered topoml sim --box-wait "")]"
offered topoml check -c "" | grep -qx topoml.conf ||
	fail "check -c is --site-conf (a file): [$(offered topoml check -c "")]"
offered topoml sim --torus3d "" | grep -qx topoml.conf ||
	fail "sim --torus3d FILE: no file offered"

[ "$fails" = 0 ] || { echo "FAIL: $fails problem(s)"; exit 1; }
echo "PASS: completion"
