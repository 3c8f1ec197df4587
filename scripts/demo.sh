#!/usr/bin/env bash
# Seed 000's "How to see it", in a new git repository that is kept for a person to look around
# (its path is printed first and last). `make demo` runs this with the project's .venv on PATH;
# it never touches this checkout.
set -euo pipefail

demo=$(mktemp -d "${TMPDIR:-/tmp}/majordomus-demo.XXXXXX")
cd "$demo"
git init -q -b main
git config user.name "Demo"
git config user.email "demo@example.invalid"
echo "a project" > README.md && git add README.md && git commit -qm "initial"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
# Each argument as it would be typed: bare when it needs no quotes, else in double quotes, or in
# single quotes when it holds a character double quotes would not keep.
quoted() {
  local arg out=()
  for arg in "$@"; do
    if [[ $arg =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then out+=("$arg")
    elif [[ $arg != *[\"\$\`\\!]* ]]; then out+=("\"$arg\"")
    else out+=("'${arg//\'/\'\\\'\'}'"); fi
  done
  printf '%s' "${out[*]}"
}
run() { step "$(quoted "$@")"; "$@"; }

echo "A new repository for the demo, kept when it ends: $demo"
run majordomus init
run majordomus capture install
step "printf '{\"session_id\":\"e1\",\"source\":\"startup\"}' | .claude/hooks/majordomus-session-start >/dev/null"
printf '{"session_id":"e1","source":"startup"}' | .claude/hooks/majordomus-session-start >/dev/null
run majordomus start "a task" --scope lib
run majordomus decision add "Tabs are refused in the parser" --why "two encodings of one thing"
step "printf '{\"session_id\":\"e1\",\"reason\":\"other\"}' | .claude/hooks/majordomus-session-end"
printf '{"session_id":"e1","reason":"other"}' | .claude/hooks/majordomus-session-end
run ls .ai/repo/knowledge/candidates/
run majordomus history --event knowledge.derived
run majordomus knowledge candidates
step "cat .ai/repo/knowledge/candidates/e1-*.md"
cat .ai/repo/knowledge/candidates/e1-*.md
run majordomus knowledge derive --episode e1
echo
echo "The candidate above was derived from the ledger and git alone: no model, no network."
echo "What follows is a person's act: promotion, with evidence on standard input."
id=$(basename .ai/repo/knowledge/candidates/e1-*.md .md)
step "echo \"the parser's tests refuse a tab since the first commit\" | majordomus knowledge promote $id"
echo "the parser's tests refuse a tab since the first commit" | majordomus knowledge promote "$id"
run majordomus knowledge check
run majordomus knowledge status
echo
echo "The next session starts: the briefing its agent reads first carries what a person verified."
step "printf '{\"session_id\":\"e2\",\"source\":\"startup\"}' | .claude/hooks/majordomus-session-start"
printf '{"session_id":"e2","source":"startup"}' | .claude/hooks/majordomus-session-start
echo
echo "That session records a decision of its own and ends: its candidate waits for a person."
run majordomus decision add "Line endings are LF only" --why "a CRLF file shifted every column the parser reported"
step "printf '{\"session_id\":\"e2\",\"reason\":\"other\"}' | .claude/hooks/majordomus-session-end"
printf '{"session_id":"e2","reason":"other"}' | .claude/hooks/majordomus-session-end
run majordomus knowledge candidates

# the majordomus this demo ran (the checkout's .venv under `make demo`, which is not on PATH after it)
mj=$(quoted "$(command -v majordomus)")
echo
echo "The demo repository is kept: $demo"
echo "Worth trying there next: review the waiting candidate at the terminal, then browse the cockpit."
echo "  cd $(quoted "$demo")"
echo "  $mj knowledge review    # promote, reject, edit or skip each candidate"
echo "  $mj serve               # the cockpit at http://127.0.0.1:8765/ (Ctrl-C stops it)"
