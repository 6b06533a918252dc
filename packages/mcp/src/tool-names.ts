const UNSAFE = /[^A-Za-z0-9_-]/g
const MAX_NAME = 64

/**
 * The Kode names of a server's tools, in list order: `prefix` + the MCP name, made of the
 * characters every provider accepts (others become `_`), starting with a letter or `_`, and at
 * most 64 long. A name that had to be
 * shortened, or that another listed tool's name also becomes once made safe (`a.b` and `a/b`),
 * ends in a short hash of its MCP name instead: every tool of such a group does, whatever the
 * list's order. So a name never moves from one tool to another when the server reorders its list
 * or adds a tool, which would make a call the model made earlier run a different tool.
 */
export function kodeToolNames(prefix: string, mcpNames: readonly string[]): string[] {
  const plain = mcpNames.map((mcpName) => {
    const name = `${prefix}${mcpName}`.replace(UNSAFE, '_')
    // Vertex AI wants a letter or `_` first: `2fa_verify` (or a server named `1password`) is
    // `_2fa_verify`.
    return /^[^A-Za-z_]/.test(name) ? `_${name}` : name
  })
  const counts = new Map<string, number>()
  for (const name of plain) counts.set(name, (counts.get(name) ?? 0) + 1)
  // Plain names first, so a hashed name can never take one a tool is given as it is.
  const taken = new Set<string>()
  const names = plain.map((name) => {
    const kept = name.length > 0 && name.length <= MAX_NAME && counts.get(name) === 1
    if (kept) taken.add(name)
    return kept ? name : undefined
  })
  return names.map((name, i) => {
    if (name !== undefined) return name
    const hashed = hashedName(plain[i]!, mcpNames[i]!, taken)
    taken.add(hashed)
    return hashed
  })
}

/**
 * `plain` cut to fit a short hash of `mcpName`. That name can itself be taken (a server listing a
 * name twice, or naming a tool like another's hashed name): hash again with a counter until free.
 */
function hashedName(plain: string, mcpName: string, taken: ReadonlySet<string>): string {
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
