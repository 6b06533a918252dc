import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { expect, test } from 'vitest'

const src = resolve(import.meta.dirname, '../src')

/** Source files of the main entry (the testing kit is a subpath of its own and may validate). */
function mainEntrySources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : mainEntrySources(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

test('run-time imports of @kode/protocol go through its helpers entry, which loads no TypeBox', () => {
  const offenders: string[] = []
  let viaHelpers = 0
  for (const file of mainEntrySources(src)) {
    const text = readFileSync(file, 'utf8')
    for (const match of text.matchAll(
      /^(?:import|export)\s+(type\s+)?[^;']*?from\s+'(@kode\/protocol[^']*)'/gms,
    )) {
      if (match[1]) continue
      if (match[2] === '@kode/protocol') offenders.push(relative(src, file))
      else viaHelpers++
    }
  }
  expect(offenders).toEqual([])
  // The scan does see run-time imports: the ones that go the cheap way.
  expect(viaHelpers).toBeGreaterThan(0)
})
