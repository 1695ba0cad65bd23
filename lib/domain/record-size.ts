/**
 * The largest record a namespace must accept (Aerospike `max-record-size`, and the embedded engine's limit): a
 * record holds at most B slots (`utxos`: each a 68-byte blob in a msgpack list, 68 + 3 bytes with its header), the
 * tx bytes when not external (`inputs` + `outputs` <= maxTxSizeInStore) and small bins (< 64 KiB together),
 * rounded up to whole MiB. Default: 20000 x 71 + 1 MiB + 64 KiB = 2,534,112 bytes -> 3 MiB. A record that would
 * still be too big comes back as RECORD_TOO_BIG and the store externalizes the tx (docs/operations.md).
 */
export function maxRecordSizeBytes(utxoBatchSize: number, maxTxSizeInStore: number): number {
  const MiB = 1024 * 1024;
  const bytes = utxoBatchSize * (68 + 3) + maxTxSizeInStore + 64 * 1024;
  return Math.ceil(bytes / MiB) * MiB;
}
