const UNSAFE = /[^A-Za-z0-9_-]/g
const MAX_NAME = 64

/**
 * The Kode name of a server's tool: `prefix` + its MCP name, made of the characters every provider
 * accepts (others become `_`) and at most 64 long. A name that had to be shortened, or that
 * collides with one already `taken`, ends in a short hash of the MCP name so it stays unique and
 * the same from one connection to the next.
 */
export function kodeToolName(prefix: string, mcpName: string, taken: ReadonlySet<string>): string {
  const plain = `${prefix}${mcpName}`.replace(UNSAFE, '_')
  if (plain.length <= MAX_NAME && plain.length > 0 && !taken.has(plain)) return plain
  // The hashed name can itself be taken (a server listing a name twice, or naming a tool like
  // another's hashed name): hash again with a counter until it is free.
  for (let attempt = 0; ; attempt++) {
    const suffix = `_${hash(attempt === 0 ? mcpName : `${mcpName}\u0000${attempt}`)}`
    const name = `${plain.slice(0, MAX_NAME - suffix.length)}${suffix}`
    if (!taken.has(name)) return name
  }
}

/** The default prefix: the server's name made safe, then `__`. */
export function defaultPrefix(serverName: string): string {
  return `${serverName.replace(UNSAFE, '_')}__`
}

/** FNV-1a, 32 bits, as 8 hex digits: stable, short, no dependency. */
function hash(text: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0).toString(16).padStart(8, '0')
}
