// majordomus for OpenCode. Written by `majordomus capture install --agent opencode`; tracked and
// shared, so it names no path of one machine. OpenCode has no hook file; this plugin maps its
// events onto majordomus's hooks, run through the script beside it
// (.opencode/hooks/majordomus-hook opencode BOUNDARY, the payload as JSON on stdin):
//   - a session's first model call opens the episode (session-start: source startup for a session
//     created in this process, resume for one continued from an earlier one), and the briefing
//     it prints joins that call's system prompt, and every later one's
//     (experimental.chat.system.transform);
//   - a compaction checkpoints first (experimental.session.compacting: pre-compact), then briefs
//     again (session.compacted: session-start, source compact);
//   - the session going idle (its turn done) closes the episode (session.idle: session-end), and
//     the session's next prompt opens it again (source resume); OpenCode waits for a close still
//     running before it exits (dispose).
// Nothing here ever blocks OpenCode: a hook that fails adds nothing, and majordomus records why.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("../hooks/majordomus-hook", import.meta.url));

function hook(boundary, payload, cwd) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(SCRIPT, ["opencode", boundary], { cwd, stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      resolve("");
      return;
    }
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => { out += chunk; });
    child.on("error", () => resolve(""));
    child.on("close", () => resolve(out));
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

export const MajordomusPlugin = async ({ directory }) => {
  const briefings = new Map(); // session id -> the briefing of its open span (a promise)
  const created = new Set();
  const closed = new Set();
  const pending = new Set();
  const track = (promise) => {
    pending.add(promise);
    promise.finally(() => pending.delete(promise));
    return promise;
  };
  const open = (id, source) => {
    closed.delete(id);
    const briefing = track(hook("session-start", { session_id: id, source, cwd: directory }, directory));
    briefings.set(id, briefing);
    return briefing;
  };
  const close = (id, reason) => {
    if (!briefings.has(id) || closed.has(id)) return Promise.resolve("");
    closed.add(id);
    return track(hook("session-end", { session_id: id, reason, cwd: directory }, directory));
  };
  return {
    event: async ({ event }) => {
      const props = event.properties || {};
      const id = props.sessionID || (props.info && props.info.id);
      if (typeof id !== "string") return;
      if (event.type === "session.created") created.add(id);
      else if (event.type === "session.compacted") await open(id, "compact");
      else if (event.type === "session.idle") await close(id, "idle");
      else if (event.type === "session.deleted") await close(id, "deleted");
    },
    "experimental.session.compacting": async ({ sessionID }) => {
      if (typeof sessionID !== "string") return;
      await track(hook("pre-compact", { session_id: sessionID, trigger: "auto", cwd: directory }, directory));
    },
    "experimental.chat.system.transform": async ({ sessionID }, output) => {
      if (typeof sessionID !== "string") return;
      let briefing = briefings.get(sessionID);
      if (briefing === undefined || closed.has(sessionID)) {
        briefing = open(sessionID, briefing === undefined && created.has(sessionID) ? "startup" : "resume");
      }
      const text = await briefing;
      if (text.trim()) output.system.push(text);
    },
    dispose: async () => {
      await Promise.all([...pending]);
    },
  };
};
