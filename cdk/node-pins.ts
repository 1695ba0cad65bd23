/**
 * Pinning what a node executes (docs/security.md, "Node settings in SSM"). The node scripts, the conf and the agent
 * config live in SSM String parameters so that a deployment can change them without touching an instance; anyone who
 * may call ssm:PutParameter on them could otherwise run code as root on the nodes. So the SHA-256 of every such value
 * (and the package checksums) is also in the CloudFormation metadata of the parameter's own resource, which only a
 * stack update can change, and a node refuses a value whose hash differs: the user data checks the bootstrap before
 * exec, the bootstrap checks the scripts, the conf, the agent config and the packages, apply-config checks the conf.
 * The node reads the metadata with cloudformation:DescribeStackResource on its own stack.
 */
import { createHash } from 'node:crypto';

/** The metadata key of a node setting's resource holding the SHA-256 a node accepts. */
export const PIN_METADATA_KEY = 'bsv-utxo-store:sha256';

/** The node settings a node checks, by the short name of their parameter (`<prefix>/<name>`). */
export type PinnedSetting =
  | 'bootstrap'
  | 'aerospike-devices'
  | 'aerospike-apply-config'
  | 'conf'
  | 'cloudwatch-agent'
  | 'package'
  | 'exporter-package';

/** Where a node finds the pins: the cluster stack's name and each setting's resource logical id. */
export interface Pins {
  stackName: string;
  logicalIds: Record<PinnedSetting, string>;
}

/**
 * The SHA-256 a node computes for a parameter value as `aws ssm get-parameter --output text` writes it (the value
 * and a newline).
 */
export function pinOf(value: string): string {
  return createHash('sha256').update(`${value}\n`).digest('hex');
}

/**
 * Bash: `pinned <setting>` prints the SHA-256 pinned for it; `fetch_pinned <parameter name> <setting> <file>` writes
 * the parameter to the file and exits unless its SHA-256 is the pinned one. Needs REGION.
 */
export function pinFunctions(pins: Pins): string {
  const cases = Object.entries(pins.logicalIds)
    .map(([k, id]) => `    ${k}) id='${id}' ;;`)
    .join('\n');
  return `pinned() { # pinned <setting>: the SHA-256 CloudFormation pinned for it (the metadata of its resource)
  local id
  case "$1" in
${cases}
    *) echo "pinned: unknown setting $1" >&2; return 1 ;;
  esac
  aws cloudformation describe-stack-resource --region "$REGION" --stack-name '${pins.stackName}' \\
    --logical-resource-id "$id" --query StackResourceDetail.Metadata --output text |
    sed -n 's/.*"${PIN_METADATA_KEY}" *: *"\\([0-9a-f]\\{64\\}\\)".*/\\1/p'
}
fetch_pinned() { # fetch_pinned <parameter name> <setting> <file>: refused unless it is what the stack pinned
  local want
  want=$(pinned "$2")
  [ -n "$want" ] || { echo "fetch_pinned: no pin for $2 in stack ${pins.stackName}" >&2; exit 1; }
  aws ssm get-parameter --region "$REGION" --name "$1" --query Parameter.Value --output text > "$3"
  if ! echo "$want  $3" | sha256sum -c --status -; then
    rm -f "$3"
    echo "fetch_pinned: $1 does not match the SHA-256 pinned in stack ${pins.stackName}: refused" >&2
    exit 1
  fi
}`;
}
