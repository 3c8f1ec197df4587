"""Audit for the end-to-end tests: Python loads this module at start-up in every process whose
PYTHONPATH names this folder, that is every `majordomus` the client's hooks and its Bash tool
run. When MJ_E2E_AUDIT_LOG names a file it appends JSON lines to it:

- `start`: the process's command line, its parent's, and both start times (seconds since boot,
  from /proc, so a hook's wall time counts from its /bin/sh wrapper);
- `open`: every open() of a path under one of the folders MJ_E2E_WATCH names (os.pathsep
  between them), through a PEP 578 audit hook; a rename onto such a path (an atomic write's
  last step) counts as an open of it for writing, its folder read from the descriptor it was
  made through when it was (majordomus writes relative to a folder descriptor);
- `end`: the time the interpreter exits.

It never raises: an audit that breaks the process under audit would test itself.
"""
import os


def _install() -> None:
    log = os.environ.get("MJ_E2E_AUDIT_LOG")
    if not log:
        return
    import atexit
    import json
    import sys
    import time

    watch = tuple(os.path.join(os.path.abspath(p), "")
                  for p in os.environ.get("MJ_E2E_WATCH", "").split(os.pathsep) if p)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    tick = os.sysconf("SC_CLK_TCK")

    def started(pid: object) -> float | None:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            return int(fields[19]) / tick
        except (OSError, IndexError, ValueError):
            return None

    def cmdline(pid: object) -> list[str]:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as raw:
                return [a.decode("utf-8", "replace") for a in raw.read().split(b"\0") if a]
        except OSError:
            return []

    def write(record: dict[str, object]) -> None:
        try:
            os.write(fd, (json.dumps(record) + "\n").encode("utf-8"))
        except OSError:
            pass

    pid, ppid = os.getpid(), os.getppid()
    write({"kind": "start", "pid": pid, "ppid": ppid, "argv": cmdline("self"), "parent": cmdline(ppid),
           "t_start": started("self"), "t_parent": started(ppid),
           "t_now": time.clock_gettime(time.CLOCK_BOOTTIME)})

    def end() -> None:
        write({"kind": "end", "pid": pid, "t_end": time.clock_gettime(time.CLOCK_BOOTTIME)})

    atexit.register(end)

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event not in ("open", "os.rename") or not watch:
            return
        try:
            if event == "open":
                record(args)
            else:  # (src, dst, src_dir_fd, dst_dir_fd): the file now at dst was written
                record((resolved(args[1], args[3] if len(args) > 3 else None), "w", os.O_WRONLY))
        except Exception:  # noqa: BLE001 - an exception here would fail the open() under audit
            pass

    def resolved(path: object, dir_fd: object) -> object:
        if isinstance(dir_fd, int) and dir_fd >= 0 and isinstance(path, (str, bytes, os.PathLike)):
            name = os.fsdecode(path)
            if not os.path.isabs(name):
                return os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), name)
        return path

    def record(args: tuple[object, ...]) -> None:
        path = args[0] if args else None
        if not isinstance(path, (str, bytes, os.PathLike)):  # an fd, or nothing
            return
        full = os.path.abspath(os.fsdecode(path))
        if full.startswith(watch) or os.path.join(full, "") in watch:
            mode = args[1] if len(args) > 1 else None
            flags = args[2] if len(args) > 2 else 0
            write({"kind": "open", "pid": pid, "path": full, "mode": mode if isinstance(mode, str) else None,
                   "flags": flags if isinstance(flags, int) else 0})

    sys.addaudithook(hook)


try:
    _install()
except Exception as exc:  # noqa: BLE001 - the audit must never break the process it watches
    import sys as _sys
    print(f"e2e audit sitecustomize failed: {exc!r}", file=_sys.stderr)
