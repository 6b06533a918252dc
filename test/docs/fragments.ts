/**
 * A ```` ```ts fragment <package> ```` block lists signatures, one a line, not a module:
 *
 *     forkSession(store, sessionId, atMessageId?, { id?, title? })
 *     decodeHistoryEvent(line): HistoryEvent  // a comment
 *
 * `fragmentCheck` turns one into a module that only type-checks when the listing is true of the
 * package: every function and return type it names is exported, each listed parameter exists,
 * the fields of a `{ ... }` parameter are fields of that parameter's type, and the return type is
 * what the function returns.
 */
export function fragmentCheck(code: string, pkg: string): string {
  const imports = new Set<string>()
  const typeImports = new Set<string>()
  const checks: string[] = []
  const lines = code.split('\n').map((line) => line.replace(/\/\/.*$/, '').trim())
  lines.forEach((line, n) => {
    if (line === '' || line.startsWith('import ')) return
    const signature = /^(\w+)\((.*)\)\s*(?::\s*(\w+))?$/.exec(line)
    if (!signature) {
      // Not a signature: make it an error of this block rather than skip it silently.
      checks.push(`type _Unreadable${n} = never // cannot read: ${line}\nconst _u${n}: _Unreadable${n} = 0`)
      return
    }
    const [, name, params, returns] = signature as unknown as [string, string, string, string | undefined]
    imports.add(name)
    splitParams(params).forEach((param, i) => {
      const slot = `Parameters<typeof ${name}>[${i}]`
      checks.push(`type _P${n}_${i} = ${slot}`)
      const fields = /^\{(.*)\}$/.exec(param)?.[1]
      if (fields === undefined) return
      const keys = fields
        .split(',')
        .map((field) => field.trim().replace(/\?$/, ''))
        .filter(Boolean)
      checks.push(`const _k${n}_${i}: readonly (keyof NonNullable<${slot}>)[] = ${JSON.stringify(keys)}`)
    })
    if (returns !== undefined) {
      if (!/^(string|number|boolean|void|unknown)$/.test(returns)) typeImports.add(returns)
      checks.push(`const _r${n}: ${returns} = null as unknown as ReturnType<typeof ${name}>`)
    }
  })
  const names = [...imports, ...[...typeImports].filter((t) => !imports.has(t)).map((t) => `type ${t}`)]
  return `import { ${names.join(', ')} } from '${pkg}'\n\n${checks.join('\n')}\n\nexport {}\n`
}

/** Splits a parameter list at its top-level commas (not those inside `{ ... }`). */
function splitParams(params: string): string[] {
  const parts: string[] = []
  let depth = 0
  let current = ''
  for (const char of params) {
    if (char === '{') depth++
    if (char === '}') depth--
    if (char === ',' && depth === 0) {
      parts.push(current.trim())
      current = ''
    } else current += char
  }
  if (current.trim() !== '') parts.push(current.trim())
  return parts
}
