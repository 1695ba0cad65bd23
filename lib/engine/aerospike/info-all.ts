/**
 * `client.infoAll` for the start-up checks (namespace, cluster size, UDF module): the node client asks every node it
 * knows and fails the whole call when one of them fails (a node killed or cut off during a start answers nothing
 * until the client's tend drops it from its list, about a second after the cluster re-forms without it). A store
 * process that starts during such a fault (a new Lambda execution environment) asks again every `pauseMs` instead of
 * failing its start, until `deadlineMs` has passed; then the last failure is thrown. The caller's deadline still ends a
 * call that never answers.
 */
import type { Client, InfoAllResponse } from 'aerospike';
import { retryWhile } from '../deadline';

export const INFO_ALL_PAUSE_MS = 250;

export function infoAllRetrying(
  client: Client,
  command: string,
  deadlineMs: number,
  pauseMs = INFO_ALL_PAUSE_MS,
): Promise<InfoAllResponse[]> {
  return retryWhile(
    () => client.infoAll(command),
    () => true,
    Date.now() + deadlineMs,
    pauseMs,
  );
}
