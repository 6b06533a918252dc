import { describe, expect, test } from 'vitest'
import { repairSchema } from '../../src/schema-repair.js'
import { inlineTopLevelRef } from '../../src/top-level-ref.js'

/** A deep copy, to show that the original was left as it was. */
const clone = <T>(value: T): T => structuredClone(value)

describe('repairing a tool schema', () => {
  test('a schema that needs nothing is the same object', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'array', items: { type: 'string' } }, b: { anyOf: [{ type: 'null' }] } },
      required: ['a'],
      $defs: { x: { type: 'object', properties: {} } },
    }
    expect(repairSchema(schema)).toBe(schema)
  })

  test('the server’s object is left as sent, and what needs nothing is shared', () => {
    const untouched = { type: 'string', enum: ['x'] }
    const schema = {
      type: 'object',
      properties: { a: { type: 'object', properties: [], required: true }, b: untouched },
      oneOf: [{ required: 'a' }],
      allOf: [{ properties: [] }],
      definitions: { d: { properties: { e: { type: 'string', required: false } } } },
      required: true,
    }
    const sent = clone(schema)
    const repaired = repairSchema(schema)
    expect(schema).toEqual(sent)
    expect(repaired).toEqual({
      type: 'object',
      properties: { a: { type: 'object', properties: {} }, b: untouched },
      oneOf: [{}],
      allOf: [{ properties: {} }],
      definitions: { d: { properties: { e: { type: 'string' } } } },
    })
    expect((repaired.properties as Record<string, unknown>).b).toBe(untouched)
  })

  test('a list of properties names none, and `required` keeps its names: checks against it are told to stay off', () => {
    const schema = { type: 'object', properties: ['a'], required: ['a', 1, null, { b: 1 }] }
    const sent = clone(schema)
    const found = { uncheckable: false }
    expect(repairSchema(schema, found)).toEqual({ type: 'object', properties: {}, required: ['a'] })
    expect(schema).toEqual(sent)
    // Ajv could not compile the list, so nothing was checked against the schema as sent.
    expect(found.uncheckable).toBe(true)
    // An empty list (an empty object, as PHP encodes one) and odd `required` entries leave it checkable.
    const checkable = { uncheckable: false }
    expect(repairSchema({ properties: [], required: [2, 'x'] }, checkable)).toEqual({
      properties: {},
      required: ['x'],
    })
    expect(checkable.uncheckable).toBe(false)
  })

  test('a schema nested deeper than the limit is left as it is below it, not overflowing the stack', () => {
    let deep: Record<string, unknown> = { type: 'object', properties: [] }
    for (let i = 0; i < 10_000; i++) deep = { type: 'object', properties: { a: deep } }
    expect(repairSchema(deep)).toBe(deep)
  })
})

describe('a top-level reference into the schema’s definitions', () => {
  const args = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }

  test('is replaced by what it names, the definitions kept, the sent schema unchanged', () => {
    const schema = { $ref: '#/definitions/a~1b%20c', title: 'T', definitions: { 'a/b c': args } }
    const sent = clone(schema)
    expect(inlineTopLevelRef(schema)).toEqual({ ...args, title: 'T', definitions: { 'a/b c': args } })
    expect(schema).toEqual(sent)
  })

  test.each([
    ['a schema that says more than the reference', { $ref: '#/$defs/a', type: 'object', $defs: { a: args } }],
    ['a reference that is not to a definition', { $ref: '#/properties/a', properties: { a: args } }],
    ['a reference deeper than one name', { $ref: '#/$defs/a/properties/q', $defs: { a: args } }],
    ['a reference to another document', { $ref: 'https://example.com/a.json', $defs: { a: args } }],
    ['a definition that is not there', { $ref: '#/$defs/b', $defs: { a: args } }],
    ['an inherited name', { $ref: '#/$defs/toString', $defs: { a: args } }],
    [
      'a definition that is another reference',
      { $ref: '#/$defs/a', $defs: { a: { $ref: '#/$defs/b' }, b: args } },
    ],
    ['a definition with its own definitions', { $ref: '#/$defs/a', $defs: { a: { ...args, $defs: {} } } }],
    ['a definition that is a boolean schema', { $ref: '#/$defs/a', $defs: { a: true } }],
  ])('is left as it is: %s', (_, schema: Record<string, unknown>) => {
    expect(inlineTopLevelRef(schema)).toBe(schema)
  })
})
