import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Event } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { repo } from './blocks.js'

// The events table of docs/protocol.md is what a UI author reads to consume the stream: each event
// of the protocol's `Event` union is in it, with every field its schema has (optional ones marked
// `?`), and no field the schema lacks. The fields every event has (`type`, `sessionId`,
// `timestamp`) and `responseId` (any response-scoped event, optional) are said once above the table.

const COMMON = new Set(['type', 'sessionId', 'timestamp', 'responseId'])

/**
 * The events table's entries: `name` → the fields listed in its parentheses, as written (`name`,
 * `name?`), or as `name=` for one shown with its value (`estimated: true`), whose optionality the
 * prose around it says.
 */
function documentedEvents(markdown: string): Map<string, string[]> {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => /^\| group\s+\| events/.test(line))
  const after = lines.slice(start + 2)
  const rows = after.slice(
    0,
    after.findIndex((line) => !line.startsWith('|')),
  )
  const documented = new Map<string, string[]>()
  for (const row of rows) {
    const cell = row.split('|')[2] ?? ''
    // `name` or `name` (fields, which may hold one level of parentheses)
    for (const [, name, fields] of cell.matchAll(/`([a-z_]+)`(?: \(((?:[^()]|\([^()]*\))*)\))?/g)) {
      documented.set(
        name!,
        // A value list after a field (`status`: `success` / `error`) names values, not fields.
        [...(fields ?? '').replace(/: `[^`]*`(?: \/ `[^`]*`)*/g, '').matchAll(/`(\w+\??)(:[^`]*)?`/g)]
          .map(([, field, value]) => (value === undefined ? field! : `${field}=`))
          .filter((field) => !COMMON.has(field.replace(/=$/, ''))),
      )
    }
  }
  return documented
}

const documented = documentedEvents(readFileSync(join(repo, 'docs/protocol.md'), 'utf8'))
const schemas = Event.anyOf.map((schema) => ({
  type: schema.properties.type.const as string,
  fields: Object.keys(schema.properties)
    .filter((field) => !COMMON.has(field))
    .map((field) => (schema.required?.includes(field) ? field : `${field}?`)),
}))

describe('the events table of docs/protocol.md', () => {
  test('lists exactly the protocol events', () => {
    expect([...documented.keys()].sort()).toEqual(schemas.map(({ type }) => type).sort())
  })

  test.each(schemas)('$type lists its schema fields', ({ type, fields }) => {
    const listed = (documented.get(type) ?? []).map((field) =>
      field.endsWith('=')
        ? (fields.find((f) => f.replace(/\?$/, '') === field.slice(0, -1)) ?? field)
        : field,
    )
    expect(listed.sort()).toEqual([...fields].sort())
  })
})
