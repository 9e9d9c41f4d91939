# bash completion for cordon(1).  Installed as
# share/bash-completion/completions/cordon; needs nothing but bash.
# tests/integration/test_install.py checks the commands and options here
# against `cordon --help` and `cordon COMMAND --help`.

_cordon()
{
	local cur prev cmd i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	local commands="run check status login job worktree token audit agent mcp gate version help"

	if ((COMP_CWORD == 1)); then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-h --help --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		fi
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	case $prev in
	--home)
		COMPREPLY=($(compgen -d -- "$cur"))
		return 0
		;;
	--token-file | --heads)
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0
		;;
	--port | --user | -n | --kind | --agent)
		return 0
		;;
	esac
	case $cmd in
	run)
		COMPREPLY=($(compgen -W "--home --port --demo --user --allow-root
		    --debug --help" -- "$cur"))
		;;
	check)
		COMPREPLY=($(compgen -W "--home --json --help" -- "$cur"))
		;;
	status)
		COMPREPLY=($(compgen -W "--home --port --token-file --json
		    --help" -- "$cur"))
		;;
	login | mcp)
		COMPREPLY=($(compgen -W "--home --port --token-file --help" \
		    -- "$cur"))
		;;
	job)
		if ((COMP_CWORD == 2)); then
			COMPREPLY=($(compgen -W "list show cancel --help" -- "$cur"))
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--home --port --token-file --json
			    --help" -- "$cur"))
		fi
		;;
	worktree)
		if ((COMP_CWORD == 2)); then
			COMPREPLY=($(compgen -W "list remove --help" -- "$cur"))
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--home --port --token-file --json
			    --help" -- "$cur"))
		fi
		;;
	token)
		COMPREPLY=($(compgen -f -- "$cur"))
		;;
	audit)
		if ((COMP_CWORD == 2)); then
			COMPREPLY=($(compgen -W "verify tail --help" -- "$cur"))
		elif [[ ${COMP_WORDS[2]} == verify ]]; then
			COMPREPLY=($(compgen -W "--home --heads --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "-f -n --kind --agent --home
			    --help" -- "$cur"))
		fi
		;;
	agent)
		if ((COMP_CWORD == 2)); then
			COMPREPLY=($(compgen -W "login --help" -- "$cur"))
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--home --user --allow-root
			    --help" -- "$cur"))
		fi
		;;
	help)
		if ((COMP_CWORD == 2)); then
			COMPREPLY=($(compgen -W "$commands --help" -- "$cur"))
		fi
		;;
	gate | version)
		COMPREPLY=($(compgen -W "--help" -- "$cur"))
		;;
	esac
	return 0
}
complete -F _cordon cordon
