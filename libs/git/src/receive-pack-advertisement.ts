/**
 * receive-pack's ref advertisement, the answer to `info/refs?service=git-receive-pack` that every
 * push over HTTP fetches first, as `git receive-pack --advertise-refs` prints it (protocol v0 and v1;
 * a push never speaks v2): each ref under `refs/` in byte order with the object it holds, the first
 * one carrying the capabilities after a NUL; an empty repository a `capabilities^{}` line instead.
 * Lode writes it from refs read through libgit2, which saves a git process per push; the
 * capabilities are git's own, taken from one real advertisement (they follow git's version and
 * configuration, the same for every repository Lode makes).
 */

const ZERO_OID = '0'.repeat(40);

/** One pkt-line: four hex digits of length (themselves included), then the payload. */
export function pktLine(payload: string): string {
  return (Buffer.byteLength(payload) + 4).toString(16).padStart(4, '0') + payload;
}

/** The capabilities of a real advertisement (what follows the NUL of its first ref line); undefined if none. */
export function advertisedCapabilities(advertisement: Buffer): string | undefined {
  for (let at = 0; at + 4 <= advertisement.length;) {
    const length = parseInt(advertisement.subarray(at, at + 4).toString('latin1'), 16);
    if (!Number.isInteger(length) || length < 4 || at + length > advertisement.length) return undefined;
    const line = advertisement.subarray(at + 4, at + length).toString('utf8');
    at += length;
    if (line.startsWith('version ')) continue;
    const nul = line.indexOf('\0');
    return nul < 0 ? undefined : line.slice(nul + 1).replace(/\n$/, '');
  }
  return undefined;
}

/**
 * The advertisement of `refs` (full name and object id, any order) with `capabilities`, ending with
 * the flush packet; `version 1` first when the client asked for it.
 */
export function receivePackAdvertisement(
  refs: readonly (readonly [string, string])[],
  capabilities: string,
  version1: boolean,
): string {
  let out = version1 ? pktLine('version 1\n') : '';
  // git walks its refs in strcmp order: by bytes, not by UTF-16 units.
  const sorted = [...refs].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  if (!sorted.length) out += pktLine(`${ZERO_OID} capabilities^{}\0${capabilities}\n`);
  sorted.forEach(([name, oid], i) => {
    out += pktLine(i === 0 ? `${oid} ${name}\0${capabilities}\n` : `${oid} ${name}\n`);
  });
  return `${out}0000`;
}
