//! Shell code appended to clap_complete's generated completions
//! (`--generate bash|zsh|fish`): node and CPU numbers completed from the
//! live machine (`/sys/devices/system/cpu/online`,
//! `/sys/devices/system/node/online`, read when the user presses TAB, not
//! when the script is generated) for the options that take them, process
//! ids of `/proc` for `--pid` (bash), and a
//! command after `--` (or after the options). Text only: rendered by
//! [`crate::app`], which prints it.

/// The options whose value is a CPU list.
const CPU_OPTIONS: &[&str] = &["--cpus", "-C", "-c", "--physcpubind", "--cpu-list"];

/// The options whose value is a node list or a node.
const NODE_OPTIONS: &[&str] = &[
    "--node",
    "--cpunodebind",
    "-N",
    "--membind",
    "-m",
    "--preferred",
    "--preferred-many",
    "--interleave",
    "--weighted-interleave",
];

/// Bash: `_pinrun_live` wraps clap's `_pinrun` and replaces its
/// registration.
pub fn bash() -> String {
    format!(
        r#"
# pinrun: CPU and node numbers of this machine, and the command after --.
_pinrun_ids() {{
    local list item a b
    read -r list < "$1" 2>/dev/null || return 0
    for item in ${{list//,/ }}; do
        if [[ $item == *-* ]]; then
            a=${{item%-*}} b=${{item#*-}}
            while (( a <= b )); do echo "$a"; (( a++ )); done
        else
            echo "$item"
        fi
    done
}}
_pinrun_live() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}" i
    for (( i = 1; i < COMP_CWORD; i++ )); do
        if [[ ${{COMP_WORDS[i]}} == -- ]]; then
            if (( i + 1 == COMP_CWORD )); then
                COMPREPLY=( $(compgen -c -- "$cur") )
            elif declare -F _command_offset >/dev/null; then
                _command_offset $(( i + 1 ))
            else
                COMPREPLY=( $(compgen -f -- "$cur") )
            fi
            return 0
        fi
    done
    case "$prev" in
        {cpus})
            COMPREPLY=( $(compgen -W "all $(_pinrun_ids /sys/devices/system/cpu/online)" -- "$cur") )
            return 0 ;;
        {nodes})
            COMPREPLY=( $(compgen -W "all $(_pinrun_ids /sys/devices/system/node/online)" -- "$cur") )
            return 0 ;;
        --pid)
            COMPREPLY=( $(compgen -W "self $(cd /proc && echo [1-9]*)" -- "$cur") )
            return 0 ;;
    esac
    _pinrun "$@"
}}
if [[ "${{BASH_VERSINFO[0]}}" -eq 4 && "${{BASH_VERSINFO[1]}}" -ge 4 || "${{BASH_VERSINFO[0]}}" -gt 4 ]]; then
    complete -F _pinrun_live -o nosort -o bashdefault -o default pinrun
else
    complete -F _pinrun_live -o bashdefault -o default pinrun
fi
"#,
        cpus = CPU_OPTIONS.join("|"),
        nodes = NODE_OPTIONS.join("|"),
    )
}

/// Fish: candidates for the CPU and node options (fish adds them to
/// clap's lines for the same options).
pub fn fish() -> String {
    let mut s = String::from(
        r#"
# pinrun: CPU and node numbers of this machine.
function __pinrun_ids
    for item in (string split , -- (cat $argv[1] 2>/dev/null))
        set -l ab (string split - -- $item)
        if test (count $ab) -eq 2
            seq $ab[1] $ab[2]
        else if test -n "$item"
            echo $item
        end
    end
end
"#,
    );
    for (opts, file) in [
        (CPU_OPTIONS, "/sys/devices/system/cpu/online"),
        (NODE_OPTIONS, "/sys/devices/system/node/online"),
    ] {
        for o in opts {
            let flag = match o.strip_prefix("--") {
                Some(long) => format!("-l {long}"),
                None => format!("-s {}", &o[1..]),
            };
            s.push_str(&format!(
                "complete -c pinrun {flag} -x -a '(__pinrun_ids {file}) all'\n"
            ));
        }
    }
    s
}

/// Zsh: `_pinrun_cpus` and `_pinrun_nodes`, which [`zsh_patch`] puts in
/// place of clap's empty value completion for those options.
fn zsh() -> &'static str {
    r#"
# pinrun: CPU and node numbers of this machine.
_pinrun_ids() {
    local list item
    list=$(<$1) 2>/dev/null || return 0
    for item in ${(s:,:)list}; do
        if [[ $item == *-* ]]; then
            print -l {${item%-*}..${item#*-}}
        else
            print -- $item
        fi
    done
}
_pinrun_cpus() { compadd all $(_pinrun_ids /sys/devices/system/cpu/online) }
_pinrun_nodes() { compadd all $(_pinrun_ids /sys/devices/system/node/online) }
"#
}

/// Clap's zsh script with [`zsh`]'s functions after its `#compdef` line
/// (which must stay first) and the empty value completion of `LIST` (CPU
/// lists) and `NODES`/`NODE` options replaced by them.
pub fn zsh_patch(generated: &str) -> String {
    let (first, rest) = generated.split_once('\n').unwrap_or((generated, ""));
    let rest = rest
        .replace(":LIST:'", ":LIST:_pinrun_cpus'")
        .replace(":NODES|all:'", ":NODES|all:_pinrun_nodes'")
        .replace(":NODES:'", ":NODES:_pinrun_nodes'")
        .replace(":NODE:'", ":NODE:_pinrun_nodes'");
    format!("{first}\n{}{rest}", zsh())
}
