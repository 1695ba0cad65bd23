/**
 * The node watchdog (docs/decisions/0007-acknowledge-through-routine-cluster-events.md): a node that was outside the
 * majority never brings the writes it applied there back into a merge.
 *
 * Every POLL_MS it asks the local asd `cluster-stable:ignore-migrations=true`: the cluster key (a settled member),
 * ERROR (an orphan, or between two clusters) or no answer within INFO_TIMEOUT_MS (silent: paused, hung, or stopped).
 *  - silent for SILENT_MS (less than the heartbeat timeout, 3 s, so before the others can re-form without it) or
 *    unstable for UNSTABLE_MS (an orphan cut off from the majority): SIGKILL asd; silence before asd first answered
 *    since its start is its start-up (loading its data), not counted;
 *  - any observation other than member sets the wipe-on-start mark; a member observation clears it. A start with the
 *    mark set wipes the namespace's devices first (the node comes back empty and is refilled by migration); a node
 *    whose last observation was member (a crash, a kill, a clean stop inside the majority) starts with its data.
 * Observations of a process that is no longer the one asked, or that systemd is stopping or starting (an operator's
 * stop), are dropped. The partition harness runs the same rule (watchdogStep) against its nodes; the cluster stack's nodes run
 * the script rendered here as a systemd service of its own.
 */

export const WATCHDOG = {
  pollMs: 250,
  infoTimeoutMs: 500,
  /** below the heartbeat timeout (150 ms x 20 = 3 s): a silent node is dead before the others re-form without it */
  silentMs: 2000,
  /** longer than a survivor's orphan spell when the principal dies (it re-forms within a clustering quantum) */
  unstableMs: 10_000,
} as const;

export type WatchdogLimits = Pick<typeof WATCHDOG, 'silentMs' | 'unstableMs'>;
export type Observation = 'member' | 'unstable' | 'silent';

export interface WatchdogState {
  /** the kind of non-member observations in a row and since when */
  since?: { kind: 'unstable' | 'silent'; at: number };
  /** the next start wipes the namespace's devices */
  wipeOnStart: boolean;
  /** asd answered since it started (before that, silence is its start-up: loading its data, not a pause) */
  answered: boolean;
  /** when the last answered request was sent: silence is counted from there, not from the first failed request */
  lastAnswerAt?: number;
}

/** The state at every start of asd (a start consumes the mark: the devices were wiped, or the data is a member's). */
export const INITIAL_WATCHDOG_STATE: WatchdogState = { wipeOnStart: false, answered: false };

/**
 * One observation of a request sent at `sentAt` and settled at `now`: the next state, and whether to SIGKILL asd now
 * (with the reason). Silence is counted from the last answered request's sending.
 */
export function watchdogStep(
  state: WatchdogState,
  observation: Observation,
  now: number,
  limits: WatchdogLimits = WATCHDOG,
  sentAt: number = now,
): { state: WatchdogState; kill?: string } {
  if (observation === 'member') return { state: { wipeOnStart: false, answered: true, lastAnswerAt: sentAt } };
  if (observation === 'silent' && !state.answered) return { state };
  const lastAnswerAt = observation === 'silent' ? state.lastAnswerAt : sentAt;
  const start = observation === 'silent' ? (state.lastAnswerAt ?? now) : now;
  const since = state.since?.kind === observation ? state.since : { kind: observation, at: start };
  const next: WatchdogState = { since, wipeOnStart: true, answered: true, lastAnswerAt };
  const limit = observation === 'silent' ? limits.silentMs : limits.unstableMs;
  if (now - since.at >= limit) return { state: next, kill: `${observation} for ${now - since.at} ms` };
  return { state: next };
}

export const WATCHDOG_MARK = '/var/lib/aerospike-watchdog/wipe-on-start';

/**
 * The watchdog service's script (bash, asinfo): the rule of watchdogStep. `MARK`, `ASINFO` overridable for tests.
 * `check-start` (ExecStartPre of aerospike.service, after the device check): with the mark set, wipes the recorded
 * devices' headers (blkdiscard, else the first 8 MiB zeroed, as on first boot) and clears the mark.
 */
export function renderWatchdogScript(devicesFile: string): string {
  const s = (ms: number) => (ms / 1000).toFixed(3);
  return `#!/bin/bash
# aerospike-watchdog run|check-start: a node that was outside the majority never rejoins with its data (decision 0007)
set -uo pipefail
MARK=\${MARK:-${WATCHDOG_MARK}}
ASINFO=\${ASINFO:-asinfo}
mark() { mkdir -p "$(dirname "$MARK")"; [ -e "$MARK" ] || { touch "$MARK"; sync "$MARK" 2>/dev/null || true; }; }
now_ms() { date +%s%3N; }
case "\${1:-}" in
  check-start)
    if [ -e "$MARK" ]; then
      echo "aerospike-watchdog: this node left the majority before it stopped: starting empty (refilled by migration)" >&2
      while IFS= read -r d; do blkdiscard "$d" || dd if=/dev/zero of="$d" bs=1M count=8 oflag=direct; done < ${devicesFile}
      rm -f "$MARK"
    fi
    ;;
  run)
    kind=''; since=0; answered=''; last_pid=''; last_answer=0
    while true; do
      pid=$(systemctl show -p MainPID --value aerospike 2>/dev/null || echo 0)
      state=$(systemctl show -p ActiveState --value aerospike 2>/dev/null || echo unknown)
      # not running, or being stopped or started by systemd (an operator's stop is not a silent node)
      if [ "$pid" = 0 ] || [ -z "$pid" ] || [ "$state" != active ]; then kind=''; sleep ${s(WATCHDOG.pollMs)}; continue; fi
      if [ "$pid" != "$last_pid" ]; then answered=''; kind=''; last_pid=$pid; fi
      sent=$(now_ms)
      out=$(timeout ${s(WATCHDOG.infoTimeoutMs)} "$ASINFO" -v 'cluster-stable:ignore-migrations=true' 2>/dev/null)
      rc=$?
      # the answer of another process than the one asked (stopped or restarted meanwhile) is dropped
      if [ "$(systemctl show -p MainPID --value aerospike 2>/dev/null || echo 0)" != "$pid" ]; then
        kind=''; sleep ${s(WATCHDOG.pollMs)}; continue
      fi
      if [ $rc -ne 0 ] || [ -z "$out" ]; then obs=silent; limit=${WATCHDOG.silentMs}
      elif [ "\${out#ERROR}" != "$out" ]; then obs=unstable; limit=${WATCHDOG.unstableMs}
      else obs=member; fi
      # silence before the first answer since this start is the start-up (loading the data)
      if [ "$obs" = silent ] && [ -z "$answered" ]; then sleep ${s(WATCHDOG.pollMs)}; continue; fi
      if [ "$obs" != silent ]; then last_answer=$sent; fi
      answered=1
      if [ "$obs" = member ]; then rm -f "$MARK"; kind=''
      else
        mark
        t=$(now_ms)
        # silence counts from the sending of the last answered request
        if [ "$kind" != "$obs" ]; then kind=$obs; if [ "$obs" = silent ]; then since=$last_answer; else since=$t; fi; fi
        if [ $((t - since)) -ge $limit ]; then
          echo "aerospike-watchdog: asd $obs for $((t - since)) ms: SIGKILL $pid (it starts empty)" >&2
          kill -KILL "$pid" 2>/dev/null || true
          kind=''
        fi
      fi
      sleep ${s(WATCHDOG.pollMs)}
    done
    ;;
  *) echo "usage: aerospike-watchdog run|check-start" >&2; exit 2 ;;
esac
`;
}

/** systemd's RestartSec for asd after a failure (the watchdog's SIGKILL, a crash) */
export const RESTART_SECONDS = 1;

/**
 * The watchdog's systemd unit (a service of its own, restarted if it dies) and aerospike.service's drop-in: the
 * start hook (check-start) and a restart after a failure.
 */
export function renderWatchdogUnits(): { service: string; startHook: string } {
  return {
    service: `[Unit]
Description=Aerospike node watchdog (decision 0007)
After=aerospike.service

[Service]
ExecStart=/usr/local/sbin/aerospike-watchdog run
Restart=always
RestartSec=1

[Install]
WantedBy=multi-user.target
`,
    // the package's aerospike.service has no Restart=: without it a node the watchdog killed would stay down until an
    // operator started it; with it systemd starts it again (empty, its mark set) and it is refilled by migration
    startHook: `[Service]
ExecStartPre=/usr/local/sbin/aerospike-watchdog check-start
Restart=on-failure
RestartSec=${RESTART_SECONDS}
`,
  };
}

/** The bootstrap's lines installing the units (after the device check's drop-in; aerospike-scripts.ts renderBootstrap). */
export function watchdogUnitsScript(): string {
  const u = renderWatchdogUnits();
  return `cat > /etc/systemd/system/aerospike.service.d/watchdog.conf <<'UNIT'
${u.startHook}UNIT
cat > /etc/systemd/system/aerospike-watchdog.service <<'UNIT'
${u.service}UNIT
`;
}
