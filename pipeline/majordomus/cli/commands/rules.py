"""majordomus rules list | vendor update."""
from __future__ import annotations

from majordomus.base.errors import OK
from majordomus.base.output import emit_json, line, say, show, table
from majordomus.cli.commands import Subparsers
from majordomus.rules import ruleset as rules
from majordomus.rules import vendor
from majordomus.rules.validators import REGISTRY
from majordomus.store.workspace import open_workspace

NAMES = ("rules",)


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("rules", help="the effective rule set; refresh the vendored standard package",
                       description="Rules are data: one YAML file a rule, vendored under "
                       ".ai/repo/rules/vendor/ (never edited by hand) and the project's own under "
                       ".ai/repo/rules/project/.")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    ls = verbs.add_parser("list", help="the effective set: each rule, its class, validator and commands",
                          description="Every rule of the effective set (vendor + project), and every "
                          "rule file that could not be read.")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(handler=lambda a: list_rules(a.json))
    v = verbs.add_parser("vendor", help="the vendored standard package")
    vv = v.add_subparsers(dest="vendor_verb", metavar="VERB")
    u = vv.add_parser("update", help="refresh .ai/repo/rules/vendor/ from the installed package",
                      description="Make .ai/repo/rules/vendor/ equal the standard package of the "
                      "installed majordomus: write what differs, remove what it no longer ships.")
    u.set_defaults(handler=lambda a: vendor_update())
    v.set_defaults(help_parser=v)
    p.set_defaults(help_parser=p)


def list_rules(as_json: bool) -> int:
    """Print the effective set; a rule file that cannot be read is printed as its finding."""

    ws = open_workspace()
    ruleset = rules.load(ws)
    if as_json:
        emit_json({"rules": [{"id": r.id, "class": r.cls, "validator": r.validator,
                              "registered": r.validator in REGISTRY, "dispatch": list(r.dispatch),
                              "category": r.category, "exit": r.exit, "message": r.message,
                              "origin": r.origin, "path": ws.rel(r.path)} for r in ruleset.rules],
                   "validators": sorted(REGISTRY),
                   "problems": [f.as_dict() for f in ruleset.problems]})
        return OK
    rows = [[line(c) for c in (r.id, r.cls, r.validator + ("" if r.validator in REGISTRY else " (missing)"),
                                ",".join(r.dispatch), r.origin)] for r in ruleset.rules]
    if rows:
        show(table(rows, ["RULE", "CLASS", "VALIDATOR", "DISPATCH", "ORIGIN"]))
    else:
        say("no rules: run `majordomus rules vendor update` to vendor the standard package")
    undeclared = sorted(set(REGISTRY) - {r.validator for r in ruleset.rules})
    if undeclared:
        say(f"validators no rule declares: {', '.join(undeclared)}")
    for problem in ruleset.problems:
        say(problem.line())
    return OK


def vendor_update() -> int:
    """Refresh the vendored copy; says what it wrote and removed."""

    ws = open_workspace()
    done = vendor.update(ws)
    for rel in done.written:
        say(f"wrote      {rel}")
    for rel in done.removed:
        say(f"removed    {rel} (no longer shipped)")
    if not done.written and not done.removed:
        say(f"rules vendor update: nothing changed ({len(done.unchanged)} file(s) up to date)")
    else:
        say(f"rules vendor update: {len(done.written)} written, {len(done.removed)} removed, "
            f"{len(done.unchanged)} unchanged. Commit .ai/repo/rules/vendor/.")
    return OK
