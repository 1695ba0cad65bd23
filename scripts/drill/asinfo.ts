/**
 * `asinfo` for the drill's nodes, put first on the PATH of the node scripts: the Aerospike tools' asinfo is not built
 * by aerospike-tools-backup (it ships with asadm), and the scripts ask only `asinfo -v <command>` of their own node.
 * This one asks the node over the info protocol (scripts/partition/cluster.ts infoCommand: one connection to one
 * node, as asinfo does, no cluster tending) and prints the value as asinfo does. Options: -h host (default
 * 127.0.0.1), -p port (default 3000), -v command.
 *
 *   node --import tsx scripts/drill/asinfo.ts [-h host] [-p port] -v <command>
 */
import { infoCommand } from '../partition/cluster';

export function parseAsinfoArgs(argv: string[]): { host: string; port: number; command: string } {
  let host = '127.0.0.1';
  let port = 3000;
  let command: string | undefined;
  for (let i = 0; i < argv.length; i += 2) {
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`asinfo: ${argv[i]} needs a value`);
    if (argv[i] === '-h') host = value;
    else if (argv[i] === '-p') port = Number(value);
    else if (argv[i] === '-v') command = value;
    else throw new Error(`asinfo: unknown option ${argv[i]} (this asinfo takes -h, -p, -v)`);
  }
  if (command === undefined) throw new Error('asinfo: -v <command> is required');
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error('asinfo: -p needs a port');
  return { host, port, command };
}

if (require.main === module) {
  Promise.resolve()
    .then(() => {
      const { host, port, command } = parseAsinfoArgs(process.argv.slice(2));
      return infoCommand(host, port, command, 5000);
    })
    .then(
      (value) => {
        process.stdout.write(`${value}\n`);
        process.exit(0);
      },
      (err: unknown) => {
        process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
}
