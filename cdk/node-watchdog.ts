/**
 * The node watchdog (docs/decisions/0007-acknowledge-through-routine-cluster-events.md): a node that was outside the
 * majority never brings the writes it applied there back into a merge.
 *
 * Every POLL_MS it asks the local asd `cluster-stable:ignore-migrations=true`: the cluster key (a settled member),
 * ERROR (an orphan, or between two clusters) or no answer within INFO_TIMEOUT_MS (silent: paused, hung, or stopped).
 *  - silent for SILENT_MS (killed at most SILENT_KILL_WORST_MS after its last answer: about the heartbeat timeout; the
 *    guard's fence, decision 0009 rule 3, not this margin, keeps a node that resumes later from mattering) or
 *    unstable for UNSTABLE_MS (an orphan cut off from the majority): SIGKILL asd; silence before asd first answered
 *    since its start is its start-up (loading its data), not counted. A silent node is killed only while at least
 *    min-cluster-size of the other nodes answer at all (silentKillAllowed: a majority could re-form without it);
 *    fewer (a stall of the whole cluster) and it is not killed, asked again at every poll: killing every node would
 *    lose the acknowledged writes still in their write buffers (CE has no commit-to-device); the first round in which
 *    they answer again after such a hold kills nothing either (it may have begun during the stall): the node is asked
 *    once more, all after the others resumed. An unstable node is killed only while at least min-cluster-size of the
 *    other nodes may serve without it (unstableKillAllowed: they answer a cluster key, or nothing); fewer (the others
 *    refuse the connection or answer ERROR: killed and restarting, loading, or up in no cluster: no majority exists
 *    without it, and it may hold the only copies of their last second of writes) and its count starts again;
 *  - any observation other than member sets the wipe-on-start mark, which records why: `unstable` (the node said it
 *    was an orphan, outside the cluster) or `silent` (it did not answer); unstable wins once seen in the same
 *    non-member spell; a member observation clears it. A node whose last observation was member (a crash, a kill, a
 *    clean stop inside the majority) starts with its data. A start with the mark set:
 *      unstable: wipes the namespace's devices first (it may hold writes taken outside the majority; it comes back
 *        empty and is refilled by migration);
 *      silent: wipes only if a majority cluster without this node is serving (at least min-cluster-size of the other
 *        nodes answer the same cluster key), asked about every PEER_RETRY_MS for up to PEER_WAIT_MS; otherwise it
 *        starts with its data (no majority serves without it: every node may have been stopped at once, a
 *        cluster-wide stall; its copies are needed). A silent node applied nothing while silent; the hazard of its
 *        data is a majority that excluded it and acknowledged writes, and no such majority serves at its restart
 *        (residual: one that did, then died within the 1-2 s before the restart; decision 0007).
 * Observations of a process that is no longer the one asked, or that systemd is stopping or starting (an operator's
 * stop), are dropped. The partition harness runs the same rules (watchdogStep, startDecision) against its nodes; the
 * cluster stack's nodes run the script rendered here as a systemd service of its own and as aerospike.service's
 * ExecStartPre (check-start).
 */

export const WATCHDOG = {
  pollMs: 250,
  infoTimeoutMs: 500,
  /** with a request's timeout, a poll and the question to the others: the kill is at most 3.05 s after the last answer */
  silentMs: 2000,
  /** longer than a survivor's orphan spell when the principal dies (it re-forms within a clustering quantum) */
  unstableMs: 10_000,
  /** a silent-marked start waits this long for a majority without the node (peers may be restarting too) */
  peerWaitMs: 10_000,
  /** between two rounds of asking the other nodes */
  peerRetryMs: 1000,
  /** per question to another node */
  peerInfoTimeoutMs: 1000,
  /** per question to another node before a silent kill (a running node answers well within a poll) */
  peerAnswerTimeoutMs: 300,
} as const;

/** The latest a silent node is killed after its last answered request: limit, timeout, poll, the others' question. */
export const SILENT_KILL_WORST_MS =
  WATCHDOG.silentMs + WATCHDOG.infoTimeoutMs + WATCHDOG.pollMs + WATCHDOG.peerAnswerTimeoutMs;

export type WatchdogLimits = Record<'silentMs' | 'unstableMs', number>;
export type Observation = 'member' | 'unstable' | 'silent';
/** why the next start may wipe: the node said it was outside the cluster (unstable), or did not answer (silent) */
export type WipeMark = 'unstable' | 'silent';

export interface WatchdogState {
  /** the kind of non-member observations in a row and since when */
  since?: { kind: 'unstable' | 'silent'; at: number };
  /**
   * the wipe-on-start mark (absent: the next start keeps the data): unstable wipes; silent wipes only when a majority
   * serves without the node (startsEmpty)
   */
  wipeOnStart?: WipeMark;
  /** asd answered since it started (before that, silence is its start-up: loading its data, not a pause) */
  answered: boolean;
  /** when the last answered request was sent: silence is counted from there, not from the first failed request */
  lastAnswerAt?: number;
}

/** The state at every start of asd (a start consumes the mark: the devices were wiped, or the data is a member's). */
export const INITIAL_WATCHDOG_STATE: WatchdogState = { answered: false };

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
  if (observation === 'member') return { state: { answered: true, lastAnswerAt: sentAt } };
  if (observation === 'silent' && !state.answered) return { state };
  const lastAnswerAt = observation === 'silent' ? state.lastAnswerAt : sentAt;
  const start = observation === 'silent' ? (state.lastAnswerAt ?? now) : now;
  const since = state.since?.kind === observation ? state.since : { kind: observation, at: start };
  // unstable wins: once the node said it was outside the cluster, a later silence does not make it a paused member
  const wipeOnStart: WipeMark = state.wipeOnStart === 'unstable' ? 'unstable' : observation;
  const next: WatchdogState = { since, wipeOnStart, answered: true, lastAnswerAt };
  const limit = observation === 'silent' ? limits.silentMs : limits.unstableMs;
  if (now - since.at >= limit) return { state: next, kill: `${observation} for ${now - since.at} ms` };
  return { state: next };
}

export const WATCHDOG_MARK = '/var/lib/aerospike-watchdog/wipe-on-start';

/** A peer's answer when its host refuses the connection: up, its asd not running (stopped, or waiting to start). */
export const PEER_DOWN = 'DOWN';

/** Whether a peer's answer names a cluster key (it serves in a cluster), not ERROR, '', DOWN or no answer. */
function servesCluster(answer: string | undefined): answer is string {
  return answer !== undefined && answer !== '' && answer !== PEER_DOWN && !answer.startsWith('ERROR');
}

/**
 * The cluster key shared by at least `minClusterSize` of the other nodes' answers to
 * `cluster-stable:ignore-migrations=true` (a majority cluster serving without this node), else undefined. No answer,
 * '', ERROR (not settled) and PEER_DOWN count for nothing.
 */
export function majorityKey(answers: (string | undefined)[], minClusterSize: number): string | undefined {
  const counts = new Map<string, number>();
  for (const a of answers) if (servesCluster(a)) counts.set(a, (counts.get(a) ?? 0) + 1);
  for (const [key, count] of counts) if (count >= Math.max(1, minClusterSize)) return key;
  return undefined;
}

/**
 * Whether a silent node may be killed (the run loop's rule before its SIGKILL for silence): only when the danger
 * exists, a majority that could re-form without it, i.e. at least `minClusterSize` of the other nodes answer
 * `cluster-stable:ignore-migrations=true` at all (a key, '' or ERROR: they run). Fewer (the whole cluster stalled, or
 * this node cut off from them): not killed, asked again at the next poll. Killing every node of a stalled cluster
 * would lose the acknowledged writes still in their write buffers (CE has no commit-to-device); a running majority
 * answers within a poll, ~2.5 s before it can re-form without this node (3 s heartbeat timeout). `own`: the node's
 * own answer to a question asked at the same time as the others' (any answer: it resumed, e.g. with the rest of a
 * stalled cluster, and its earlier silence is stale: not killed). `heldBefore`: the previous round was held (the
 * others did not answer): this round may have begun while every node was stopped, and a question pending when they
 * resume is answered by each in turn, the node's own maybe last, after the round's timeout; so the first round in
 * which the others answer again kills nothing (`peersBack`), and the node is asked once more, its regular question
 * and a whole round, all after the others resumed (found by the e2e's whole-cluster stall: two of three nodes killed
 * 0.1 s after they all resumed, the third then an orphan, killed and wiped).
 */
export function silentKillAllowed(
  answers: (string | undefined)[],
  minClusterSize: number,
  own?: string,
  heldBefore = false,
): { kill: boolean; answering: number; resumed: boolean; peersBack: boolean } {
  const answering = answers.filter((a) => a !== undefined).length;
  // the node itself answered the question asked together with the others': it resumed (the whole cluster did)
  const resumed = own !== undefined;
  const majorityRuns = !resumed && answering >= Math.max(1, minClusterSize);
  return { kill: majorityRuns && !heldBefore, answering, resumed, peersBack: majorityRuns && heldBefore };
}

/**
 * Whether an unstable node may be killed (the run loop's rule before its SIGKILL for being outside the cluster;
 * decision 0009 rule 6): only while at least `minClusterSize` of the other nodes may be serving without it: they
 * answer a cluster key, or give no answer (cut off: they may). A peer whose host refuses the connection (PEER_DOWN:
 * the peer's kernel answers and nothing listens; asd is stopped, waiting in check-start or loading its data) or that
 * answers ERROR or '' (up, in no cluster yet) serves nobody. With fewer, no majority exists without this node: it may
 * hold writes the others lost (a killed node's write buffer dies with it; CE has no commit-to-device), so it is not
 * killed and its spell starts again (`restartSpell`); the others join it once they have loaded. On AWS no network
 * element answers in a peer's name (security groups and network ACLs drop), so a refusal is the peer itself; a host
 * firewall with REJECT rules between the nodes is not part of the deployment (runbook).
 */
export function unstableKillAllowed(
  answers: (string | undefined)[],
  minClusterSize: number,
): { kill: boolean; mayServe: number } {
  const mayServe = answers.filter((a) => a === undefined || servesCluster(a)).length;
  return { kill: mayServe >= Math.max(1, minClusterSize), mayServe };
}

/** The state after a held kill: the spell counts again from `now` (the mark stays). */
export function restartSpell(state: WatchdogState, now: number): WatchdogState {
  return state.since ? { ...state, since: { kind: state.since.kind, at: now } } : state;
}

export interface StartDecision {
  wipe: boolean;
  /** for the log: which way it went and why */
  why: string;
}

/**
 * What a start does with the node's mark (the rule of check-start, run by the harness too; decision 0009). No mark
 * keeps the data. Any mark wipes only once a majority without this node is seen serving (`askPeers`: the other
 * nodes' answers, asked every `retryMs`): a wipe never drops the last copies. Without such a majority:
 *   - silent (it applied nothing while silent): starts with its data after `waitMs`;
 *   - unstable (it took writes outside the majority): it does not start while any other node may be serving
 *     without it; it starts with its data once every other node has been reachable and in no cluster (asd not
 *     running, PEER_DOWN, or answering ERROR) for `waitMs` (every node was isolated or stopped: no majority served
 *     without it that still serves). It waits as long as that takes (`aborted` ends the wait: no start).
 */
export async function startDecision(
  mark: WipeMark | undefined,
  askPeers: () => Promise<(string | undefined)[]>,
  minClusterSize: number,
  o: { waitMs: number; retryMs: number; sleep?: (ms: number) => Promise<void>; aborted?: () => boolean } = {
    waitMs: WATCHDOG.peerWaitMs,
    retryMs: WATCHDOG.peerRetryMs,
  },
): Promise<StartDecision> {
  if (mark === undefined) return { wipe: false, why: 'no mark (last seen a member)' };
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const started = Date.now();
  let quietSince: number | undefined;
  for (;;) {
    const answers = await askPeers();
    const key = majorityKey(answers, minClusterSize);
    if (key !== undefined)
      return { wipe: true, why: `a majority of ${minClusterSize} serves without it (cluster key ${key})` };
    const now = Date.now();
    if (mark === 'silent') {
      if (now - started >= o.waitMs)
        return {
          wipe: false,
          why:
            `no majority serving without this node within ${o.waitMs / 1000} s: every node may have been killed at ` +
            'once; starting with its data',
        };
    } else if (answers.every((a) => a !== undefined && !servesCluster(a))) {
      quietSince ??= now;
      if (now - quietSince >= o.waitMs)
        return {
          wipe: false,
          why:
            `every other node reachable and in no cluster for ${o.waitMs / 1000} s (every node was isolated or ` +
            'stopped): starting with its data',
        };
    } else quietSince = undefined;
    if (o.aborted?.()) return { wipe: false, why: 'stopped while waiting' };
    await sleep(o.retryMs);
  }
}

/** Where the other nodes are found by check-start: the node's aerospike.conf and its port layout. */
export interface WatchdogConf {
  /** the node's aerospike.conf (mesh-seed-address-port lines: the nodes; min-cluster-size: the majority) */
  file: string;
  /** heartbeat port minus service port: a seed's service port is its heartbeat port minus this */
  serviceBelowHeartbeat: number;
}

/**
 * The watchdog service's script (bash, asinfo): the rule of watchdogStep and startDecision. `MARK`, `ASINFO`, `CONF`,
 * `PEERS` (host:port service addresses, default the conf's mesh seeds), `MIN_CLUSTER_SIZE` (default the conf's),
 * `PEER_WAIT_MS`, `UNSTABLE_MS` overridable for tests. The mark file holds its kind (unstable, silent; empty: an earlier version's
 * mark, wiped as before). `check-start` (ExecStartPre of aerospike.service, after the device check): with the mark
 * set, wipes the recorded devices' headers (blkdiscard, else the first 8 MiB zeroed, as on first boot) when the mark
 * is unstable, or silent and a majority serves without this node; else starts with the data; clears the mark.
 */
export function renderWatchdogScript(devicesFile: string, conf: WatchdogConf): string {
  const s = (ms: number) => (ms / 1000).toFixed(3);
  return withoutComments(`#!/bin/bash
# aerospike-watchdog run|check-start: a node that was outside the majority never rejoins with its data (decisions 0007, 0009)
set -uo pipefail
MARK=\${MARK:-${WATCHDOG_MARK}}
ASINFO=\${ASINFO:-asinfo}
CONF=\${CONF:-${conf.file}}
PEER_WAIT_MS=\${PEER_WAIT_MS:-${WATCHDOG.peerWaitMs}}
UNSTABLE_MS=\${UNSTABLE_MS:-${WATCHDOG.unstableMs}}
# mark <kind>: the kind recorded durably; unstable is never downgraded to silent
mark() {
  [ "$(cat "$MARK" 2>/dev/null)" = "$1" ] && return
  [ "$1" = silent ] && [ "$(cat "$MARK" 2>/dev/null)" = unstable ] && return
  mkdir -p "$(dirname "$MARK")"
  printf '%s\\n' "$1" > "$MARK.tmp" && sync "$MARK.tmp" 2>/dev/null; mv -f "$MARK.tmp" "$MARK"; sync "$MARK" 2>/dev/null || true
}
now_ms() { date +%s%3N; }
# the other nodes' service addresses (this node's own asd is not running during check-start: it never answers)
peers() {
  if [ -n "\${PEERS:-}" ]; then printf '%s\\n' $PEERS; return; fi
  local self; self=$(hostname 2>/dev/null || true)
  awk -v self="$self" -v d=${conf.serviceBelowHeartbeat} '$1 == "mesh-seed-address-port" && $2 != self { print $2 ":" ($3 - d) }' "$CONF"
}
min_cluster_size() {
  local m=\${MIN_CLUSTER_SIZE:-$(awk '$1 == "min-cluster-size" { print $2; exit }' "$CONF" 2>/dev/null)}
  # no min-cluster-size: a majority of the conf's nodes
  if ! [[ "$m" =~ ^[1-9][0-9]*$ ]]; then m=$(( ($(awk '$1 == "mesh-seed-address-port"' "$CONF" 2>/dev/null | wc -l) / 2) + 1 )); fi
  echo "$m"
}
# tcp_probe <host> <port> [seconds]: 0 connected, 1 refused (the host is up, nothing listens), 124 no answer or no address
tcp_probe() {
  getent hosts "$1" >/dev/null 2>&1 || return 124
  timeout "\${3:-1}" bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>/dev/null; local rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 124 ] && return $rc
  return 1
}
TCP_PROBE=\${TCP_PROBE:-tcp_probe}
# peer_answers: a line per other node: its cluster-stable answer (a key, ERROR...), DOWN (its host refuses the
# connection: asd not running) or NONE (no answer: cut off, or running but not answering)
peer_answers() {
  local p out
  for p in $(peers); do
    if out=$(timeout ${s(WATCHDOG.peerInfoTimeoutMs)} "$ASINFO" -h "\${p%:*}" -p "\${p##*:}" -v 'cluster-stable:ignore-migrations=true' 2>/dev/null) && [ -n "$out" ]; then
      printf '%s\\n' "$out"
    elif "$TCP_PROBE" "\${p%:*}" "\${p##*:}"; [ $? -eq 1 ]; then echo DOWN
    else echo NONE; fi
  done
}
# majority_key <min> <answers>: the cluster key at least <min> of the other nodes answer (a majority serving without
# this node); fails when there is none
majority_key() {
  grep -v -e '^$' -e '^ERROR' -e '^DOWN$' -e '^NONE$' <<< "$2" | sort | uniq -c | awk -v m="$1" '$1 >= m { print $2; found = 1; exit } END { exit !found }'
}
# in_no_cluster <answers>: every other node answered and none serves in a cluster (DOWN or ERROR)
in_no_cluster() {
  ! grep -v -e '^$' -e '^ERROR' -e '^DOWN$' <<< "$1" | grep -q .
}
# kill_round: asked before a silent kill, all at once (one timeout at most): "up" for each other node answering at
# all (a key or ERROR: it runs and could re-form without this node), "self" if the local asd answers (it resumed)
kill_round() {
  local p
  ( timeout ${s(WATCHDOG.peerAnswerTimeoutMs)} "$ASINFO" -v 'cluster-stable:ignore-migrations=true' >/dev/null 2>&1 && echo self ) &
  for p in $(peers); do
    ( timeout ${s(WATCHDOG.peerAnswerTimeoutMs)} "$ASINFO" -h "\${p%:*}" -p "\${p##*:}" -v 'cluster-stable:ignore-migrations=true' >/dev/null 2>&1 && echo up ) &
  done
  wait
}
# may_serve_round: asked before an unstable kill, all at once: "may" for each other node that answers a cluster key
# or gives no answer (cut off: it may serve without this node); one refusing the connection (asd not running) or
# answering ERROR (in no cluster) serves nobody
may_serve_round() {
  local p
  for p in $(peers); do (
    "$TCP_PROBE" "\${p%:*}" "\${p##*:}" ${s(WATCHDOG.peerAnswerTimeoutMs)}; rc=$?
    [ $rc -eq 1 ] && exit
    [ $rc -ne 0 ] && { echo may; exit; }
    out=$(timeout ${s(WATCHDOG.peerAnswerTimeoutMs)} "$ASINFO" -h "\${p%:*}" -p "\${p##*:}" -v 'cluster-stable:ignore-migrations=true' 2>/dev/null)
    [ -n "$out" ] && [ "\${out#ERROR}" != "$out" ] || echo may
  ) & done
  wait
}
# wipe: fails if any device could not be wiped (check-start then fails: the node does not start, the mark stays)
wipe() {
  local d
  while IFS= read -r d; do
    blkdiscard "$d" || dd if=/dev/zero of="$d" bs=1M count=8 oflag=direct || return 1
  done < ${devicesFile}
}
case "\${1:-}" in
  check-start)
    if [ -e "$MARK" ]; then
      kind=$(cat "$MARK" 2>/dev/null); kind=\${kind:-unstable}
      # any mark: wiped only once a majority is seen serving without this node (the wipe never drops the last copies)
      min=$(min_cluster_size); started=$(now_ms); quiet=''; said=0
      while true; do
        answers=$(peer_answers)
        if key=$(majority_key "$min" "$answers"); then
          echo "aerospike-watchdog: this node was killed $kind and a majority of $min serves without it (cluster key $key): starting empty (refilled by migration)" >&2
          wipe || { echo "aerospike-watchdog: wiping the devices failed: not starting (the mark stays)" >&2; exit 1; }
          break
        fi
        t=$(now_ms)
        if [ "$kind" = silent ]; then
          # it applied nothing while silent: without a majority serving, its copies are needed
          if [ "$t" -ge $((started + PEER_WAIT_MS)) ]; then
            echo "aerospike-watchdog: this node was killed silent and no majority serving without this node (min-cluster-size $min) within $((PEER_WAIT_MS / 1000)) s: every node may have been killed at once; starting with its data" >&2
            break
          fi
        elif in_no_cluster "$answers"; then
          # it took writes outside the majority: kept only when no other node serves, none cut off (every node isolated or stopped)
          [ -n "$quiet" ] || quiet=$t
          if [ "$t" -ge $((quiet + PEER_WAIT_MS)) ]; then
            echo "aerospike-watchdog: this node was killed $kind and every other node is reachable and in no cluster for $((PEER_WAIT_MS / 1000)) s (every node was isolated or stopped): starting with its data" >&2
            break
          fi
        else
          quiet=''
          if [ "$t" -ge $((said + 10000)) ]; then
            echo "aerospike-watchdog: this node was killed $kind; no majority serving without it and not every other node reachable: waiting (it may hold writes taken outside the majority)" >&2
            said=$t
          fi
        fi
        sleep ${s(WATCHDOG.peerRetryMs)}
      done
      rm -f "$MARK"
    fi
    ;;
  run)
    kind=''; since=0; answered=''; last_pid=''; last_answer=0; held=''
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
      elif [ "\${out#ERROR}" != "$out" ]; then obs=unstable; limit=$UNSTABLE_MS
      else obs=member; fi
      # silence before the first answer since this start is the start-up (loading the data)
      if [ "$obs" = silent ] && [ -z "$answered" ]; then sleep ${s(WATCHDOG.pollMs)}; continue; fi
      if [ "$obs" != silent ]; then last_answer=$sent; fi
      answered=1
      if [ "$obs" = member ]; then rm -f "$MARK"; kind=''; held=''
      else
        mark "$obs"
        t=$(now_ms)
        # silence counts from the sending of the last answered request
        if [ "$kind" != "$obs" ]; then kind=$obs; held=''; if [ "$obs" = silent ]; then since=$last_answer; else since=$t; fi; fi
        go=1
        if [ $((t - since)) -ge $limit ] && [ "$obs" = silent ]; then
          # only when a majority could re-form without it: a whole-cluster stall is not killed (its write buffers
          # would be lost); asked again at every poll while the silence lasts
          min=$(min_cluster_size); round=$(kill_round); k=$(grep -c up <<< "$round")
          if grep -q self <<< "$round"; then
            # it answered meanwhile (resumed): its silence is over, the next poll sees it
            go=''
          elif [ "$k" -lt "$min" ]; then
            go=''
            [ -n "$held" ] || echo "aerospike-watchdog: asd silent for $((t - since)) ms but only $k of the other nodes answer (min-cluster-size $min): a whole-cluster stall, not killed; checking again" >&2
            held=1
          elif [ -n "$held" ]; then
            # the others answer again after a whole-cluster stall: this round may have begun during it (each node
            # answers a pending question in turn as they resume): asked once more, all after they resumed
            go=''; held=''
            echo "aerospike-watchdog: asd silent for $((t - since)) ms; $k of the other nodes answer again after a whole-cluster stall: asked once more before a kill" >&2
          fi
        fi
        if [ $((t - since)) -ge $limit ] && [ "$obs" = unstable ]; then
          # only while a majority could serve without it: the others restarting, loading or in no cluster hold less
          min=$(min_cluster_size); k=$(may_serve_round | grep -c may)
          if [ "$k" -lt "$min" ]; then
            go=''
            echo "aerospike-watchdog: asd unstable for $((t - since)) ms but only $k of the other nodes may serve (the others refuse the connection or are in no cluster; min-cluster-size $min): not killed, counting again" >&2
            since=$t
          fi
        fi
        if [ $((t - since)) -ge $limit ] && [ -n "$go" ]; then
          echo "aerospike-watchdog: asd $obs for $((t - since)) ms: SIGKILL $pid (mark $(cat "$MARK" 2>/dev/null): check-start decides whether it starts empty)" >&2
          kill -KILL "$pid" 2>/dev/null || true
          kind=''; held=''
        fi
      fi
      sleep ${s(WATCHDOG.pollMs)}
    done
    ;;
  *) echo "usage: aerospike-watchdog run|check-start" >&2; exit 2 ;;
esac
`);
}

/**
 * The script as deployed: comment lines dropped after the header (their text stays here, in the source), so that it
 * fits in one SSM parameter (8 KB, advanced tier). No line of the script starts with `#` inside a string.
 */
function withoutComments(script: string): string {
  const [shebang, header, ...rest] = script.split('\n');
  return [shebang, header, ...rest.filter((line) => !/^\s*#/.test(line))].join('\n');
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
