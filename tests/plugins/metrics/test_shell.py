"""Python interpreter invocations parsed out of shell commands (TraceBench Appendix G.1)."""

from __future__ import annotations

import pytest

from tsagent_plugins.metrics.shell import (
    Display,
    FileUnknown,
    FileWrite,
    Patch,
    PythonRun,
    analyze,
    extract_heredocs,
    normalize_path,
    python_calls,
)

CASES = [
    # (command, expected interpreter invocations)
    ("python x.py", 1),
    ("python3 -c 'print(1)'", 1),
    ("/usr/bin/python3.13 -u run.py", 1),
    ("python3.11 -m pytest -q", 1),
    ("python3 - <<'EOF'\nimport os\nprint(1)\nEOF", 1),
    ("python3 <<EOF\nprint(2)\nEOF", 1),
    ("cat <<EOF | python\nprint(2)\nEOF", 1),
    ("python3 <<< 'print(1)'", 1),
    ("echo 'print(1)' | python3", 1),
    ("python x.py && python x.py", 2),
    ("python a.py; python b.py || python c.py", 3),
    ("python a.py | tee out.txt | python b.py", 2),
    ("(cd sub && python a.py)", 1),
    ("{ python a.py; python b.py; }", 2),
    ("echo $(python -c 'print(1)')", 1),
    ("x=`python3 -c 'print(3)'`; echo $x", 1),
    ("diff <(python a.py) <(python b.py)", 2),
    ("bash -c 'python -c \"print(1)\" && python3 x.py'", 2),
    ("sh -lc \"cd /workspace && python3 x.py\"", 1),
    ("bash <<'EOF'\npython a.py\npython b.py\nEOF", 2),
    ("eval \"python -c 'print(1)'\"", 1),
    ("timeout 120 python3 analysis.py 2>&1 | tail -50", 1),
    ("timeout -s KILL 60 env A=1 B=2 python run.py", 1),
    ("nice -n 10 nohup python a.py &", 1),
    ("uv run python x.py", 1),
    ("uv run --with numpy x.py", 1),
    ("VAR=1 python -m pytest", 1),
    ("./run.py --fast", 1),
    ("for f in a.py b.py; do python $f; done", 1),
    ("if [[ -f a.py ]]; then python a.py; fi", 1),
    ("x=$((1+2)); python -c 'print(1)'", 1),
    ("case $x in a) python a.py;; b) python3 -m pytest;; esac", 2),
    ("time python a.py", 1),
    ("python a.py \\\n  --flag 1", 1),
    # not calls: displaying or mentioning Python
    ("cat x.py", 0),
    ("head -n 20 analysis.py", 0),
    ("echo \"python -c 1\"", 0),
    ("grep python notes.txt", 0),
    ("which python3", 0),
    ("pip install numpy", 0),
    ("uv run pytest", 0),
    ("ls *.py", 0),
    ("python_tool --run", 0),
    ("python -c 'print(1)' # python b.py", 1),
]


@pytest.mark.parametrize("command,expected", CASES)
def test_python_calls(command, expected):
    assert python_calls(command) == expected


@pytest.mark.parametrize("command,expected", CASES)
def test_fallback_lexer_agrees_with_bashlex(command, expected):
    """The documented fallback gives the same events as the bashlex path."""
    fallback = analyze(command, parser="fallback")
    assert fallback.parser == "fallback"
    assert len(fallback.runs) == expected
    assert fallback.events == analyze(command).events


def test_bashlex_is_used_and_fallback_recorded():
    assert analyze("python a.py && python b.py").parser == "bashlex"
    assert analyze("if [[ -f a ]]; then python a.py; fi").parser == "fallback"  # bashlex lacks [[ ]]


def test_heredoc_body_with_python_c_is_one_call():
    command = "python3 - <<'EOF'\nimport subprocess\nsubprocess.run(['python', '-c', 'print(1)'])\n" \
              "# python -c \"print(2)\"\nEOF"
    analysis = analyze(command)
    assert analysis.runs == [PythonRun("stdin", source="import subprocess\nsubprocess.run(['python', '-c', "
                                                       "'print(1)'])\n# python -c \"print(2)\"\n")]


def test_inline_code_and_modules_are_recorded():
    runs = analyze("python -u -c 'x = 1' && python -m json.tool f.json && python -W ignore s.py").runs
    assert runs == [PythonRun("inline", source="x = 1"), PythonRun("module", module="json.tool"),
                    PythonRun("script", path="s.py")]


def test_script_written_then_run_twice():
    analysis = analyze("cat > x.py <<'PY'\nprint(3)\nPY\npython x.py && python /workspace/x.py")
    assert analysis.events == [FileWrite("x.py", "print(3)\n"), PythonRun("script", path="x.py"),
                               PythonRun("script", path="x.py")]


def test_file_writes_by_shell():
    assert analyze("cat <<EOF > a.py\nA\nEOF").events == [FileWrite("a.py", "A\n")]
    assert analyze("tee -a b.py <<'EOF'\nB\nEOF").events == [FileWrite("b.py", "B\n", append=True)]
    assert analyze("echo 'print(1)' > c.py").events == [FileWrite("c.py", "print(1)\n")]
    assert analyze("printf 'x = 1\\ny = 2\\n' > d.py").events == [FileWrite("d.py", "x = 1\ny = 2\n")]
    assert analyze("sed -i 's/a/b/' e.py").events == [FileUnknown("e.py")]
    assert analyze("python gen.py > f.py").events == [PythonRun("script", path="gen.py"), FileUnknown("f.py")]


def test_cat_display_vs_pipe_vs_copy():
    assert analyze("cat x.py").events == [Display("x.py")]
    assert analyze("cat x.py | python").events == [PythonRun("script", path="x.py")]
    known = {"a.py": "A = 1\n"}
    assert analyze("cat a.py > b.py", read_file=known.get).events == [FileWrite("b.py", "A = 1\n")]
    assert analyze("cp a.py c.py", read_file=known.get).events == [FileWrite("c.py", "A = 1\n")]


def test_known_shell_script_is_analysed():
    known = {"run.sh": "python a.py\npython b.py\n"}
    assert len(analyze("bash run.sh", read_file=known.get).runs) == 2
    assert len(analyze("bash other.sh", read_file=known.get).runs) == 0


def test_apply_patch_heredoc():
    patch = "*** Begin Patch\n*** Add File: a.py\n+x = 1\n*** End Patch\n"
    assert analyze(f"apply_patch <<'EOF'\n{patch}EOF").events == [Patch(patch)]


def test_cd_changes_relative_paths():
    runs = analyze("cd /workspace/sub && python a.py; cd .. && python b.py").runs
    assert [r.path for r in runs] == ["sub/a.py", "b.py"]


def test_extract_heredocs():
    text, bodies = extract_heredocs("cat <<-'EOF' > a\n\tline1\n\tline2\n\tEOF\necho '<<not' done")
    assert text == "cat < __HEREDOC_0__ > a\necho '<<not' done"
    assert bodies == ["line1\nline2\n"]
    text, bodies = extract_heredocs("python - <<A; cat <<\"B\"\n1\nA\n2\nB\n")
    assert bodies == ["1\n", "2\n"]
    _, bodies = extract_heredocs("python - <<EOF\nprint(1)\n")  # no terminator: runs to the end
    assert bodies == ["print(1)\n"]


def test_normalize_path():
    assert normalize_path("/workspace/a/./b.py") == "a/b.py"
    assert normalize_path("./x.py") == "x.py"
    assert normalize_path("y.py", cwd="sub") == "sub/y.py"
    assert normalize_path("/tmp/z.py") == "/tmp/z.py"


def test_rejects_unknown_parser_choice():
    with pytest.raises(ValueError, match="parser"):
        analyze("ls", parser="tree-sitter")


@pytest.mark.parametrize("command, calls", [
    ("python x.py", 1), ("python3 -c 'print(1)'", 1),
    ("python3.13 x.py", 1), ("/usr/bin/python3.13 -c 1", 1),
    ("ipython -c 'print(1)'", 1), ("ipython3 x.py", 1),
    ("pypy3 x.py", 1),
    ("python3 --version", 1),
    ("command -v python3", 0), ("which python3", 0),
    ("jupyter nbconvert --execute a.ipynb", 0),
    ("./x.py", 1),
])
def test_python_call_leniency(command, calls):
    """One row of the table in the module docstring of tsagent_plugins.metrics.shell."""
    assert python_calls(command) == calls
