import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Event, HistoryRecord } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { repo } from './blocks.js'

// The events table of docs/protocol.md is what a UI author reads to consume the stream, and its
// records table what a host reads to find its way in a history: each event of the protocol's
// `Event` union (each record of `HistoryRecord`) is in its table, with every field its schema has
// (optional ones marked `?`), and no field the schema lacks. The fields every event has (`type`,
// `sessionId`, `timestamp`) and `responseId` (any response-scoped event, optional) are said once
// above the events table; every record's `type`, `id` and `createdAt` above the messages table.

const COMMON_EVENT = new Set(['type', 'sessionId', 'timestamp', 'responseId'])
const COMMON_RECORD = new Set(['type', 'id', 'createdAt'])

/** What is read of a TypeBox object schema. */
interface ObjectSchema {
  properties: Record<string, unknown>
  required?: string[]
}

/**
 * The events table's entries: `name` → the fields listed in its parentheses, as written (`name`,
 * `name?`), or as `name=` for one shown with its value (`estimated: true`), whose optionality the
 * prose around it says.
 */
function documented(
  markdown: string,
  header: RegExp,
  common: Set<string>,
  entries: (cells: string[]) => string,
): Map<string, string[]> {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => header.test(line))
  const after = lines.slice(start + 2)
  const rows = after.slice(
    0,
    after.findIndex((line) => !line.startsWith('|')),
  )
  const found = new Map<string, string[]>()
  for (const row of rows) {
    const cell = entries(row.split('|').map((cell) => cell.trim()))
    // `name` or `name` (fields, which may hold one level of parentheses)
    for (const [, name, fields] of cell.matchAll(/`([a-z_]+)`(?: \(((?:[^()]|\([^()]*\))*)\))?/g)) {
      found.set(
        name!,
        // A value list after a field (`status`: `success` / `error`) names values, not fields.
        [...(fields ?? '').replace(/: `[^`]*`(?: \/ `[^`]*`)*/g, '').matchAll(/`(\w+\??)(:[^`]*)?`/g)]
          .map(([, field, value]) => (value === undefined ? field! : `${field}=`))
          .filter((field) => !common.has(field.replace(/=$/, ''))),
      )
    }
  }
  return found
}

const protocolMd = readFileSync(join(repo, 'docs/protocol.md'), 'utf8')

/** Each schema of a union by its `type`, with its fields (optional ones marked `?`) beyond `common`. */
function schemaFields(union: { anyOf: ObjectSchema[] }, common: Set<string>) {
  return union.anyOf.map((schema) => ({
    type: (schema.properties.type as { const: string }).const,
    fields: Object.keys(schema.properties)
      .filter((field) => !common.has(field))
      .map((field) => (schema.required?.includes(field) ? field : `${field}?`)),
  }))
}

/** The documented fields, a field shown with its value taking the schema's optionality. */
function listed(documentedFields: string[], fields: string[]): string[] {
  return documentedFields
    .map((field) =>
      field.endsWith('=')
        ? (fields.find((f) => f.replace(/\?$/, '') === field.slice(0, -1)) ?? field)
        : field,
    )
    .sort()
}

describe.each([
  // | group | `name` (fields), `name` (fields) |
  {
    table: 'events',
    header: /^\| group\s+\| events/,
    union: Event,
    common: COMMON_EVENT,
    entries: (cells: string[]) => cells[2]!,
  },
  // | `name` | fields | when |
  {
    table: 'records',
    header: /^\| record\s+\| fields/,
    union: HistoryRecord,
    common: COMMON_RECORD,
    entries: (cells: string[]) => `${cells[1]} (${cells[2]})`,
  },
])('the $table table of docs/protocol.md', ({ header, union, common, entries }) => {
  const found = documented(protocolMd, header, common, entries)
  const schemas = schemaFields(union as unknown as { anyOf: ObjectSchema[] }, common)

  test('lists exactly the schemas of the union', () => {
    expect([...found.keys()].sort()).toEqual(schemas.map(({ type }) => type).sort())
  })

  test.each(schemas)('$type lists its schema fields', ({ type, fields }) => {
    expect(listed(found.get(type) ?? [], fields)).toEqual([...fields].sort())
  })
})
