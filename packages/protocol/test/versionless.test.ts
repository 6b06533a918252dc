import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MESSAGE_SCHEMAS, RECORD_SCHEMAS } from '../src/codec/checked-schemas.js'
import { compiledChecks, versionlessCopies } from '../src/codec/compiled-checks.generated.js'
import { decodeHistoryEvent, encodeHistoryEvent } from '../src/codec/history-codec.js'
import { withoutVersion } from '../src/codec/versionless.js'
import { historyEvent } from './arbitraries.js'

/** What a decoded line must be: every key but `v`, in the line's order (the generic copy). */
function genericCopy(value: Record<string, unknown>): Record<string, unknown> {
  const { v, ...rest } = value
  return rest
}

/** The same keys and values in the same order: key order is what a rewrite (fork) writes back. */
function expectSameCopy(got: Record<string, unknown>, value: Record<string, unknown>): void {
  const expected = genericCopy(value)
  expect(Object.keys(got)).toEqual(Object.keys(expected))
  expect(got).toStrictEqual(expected)
  expect(got).not.toBe(value)
}

describe('a decoded line without its version', () => {
  it('is the line minus `v`, keys in order, for any record', () => {
    fc.assert(
      fc.property(historyEvent, (event) => {
        const line = encodeHistoryEvent(event)
        expectSameCopy(decodeHistoryEvent(line) as unknown as Record<string, unknown>, JSON.parse(line))
      }),
      { numRuns: 300 },
    )
  })

  it('keeps unknown fields, keys out of order and `v` elsewhere than first', () => {
    const shapes = (value: Record<string, unknown>): Record<string, unknown>[] => {
      const entries = Object.entries(value)
      const [version, ...rest] = entries
      return [
        Object.fromEntries([...entries, ['origin', { app: 'ide' }]]),
        Object.fromEntries([version!, ['origin', 1], ...rest]),
        Object.fromEntries([version!, ...rest.slice(0, 2), ['x', null], ...rest.slice(2)]),
        Object.fromEntries([version!, ...[...rest].reverse()]),
        Object.fromEntries([...rest, version!]),
        Object.fromEntries([version!, ...rest.slice(1), rest[0]!]),
        Object.fromEntries(rest),
      ]
    }
    fc.assert(
      fc.property(historyEvent, (event) => {
        for (const value of shapes(JSON.parse(encodeHistoryEvent(event)))) {
          expectSameCopy(withoutVersion(value), value)
        }
      }),
      { numRuns: 200 },
    )
  })

  it('takes the generated copy for a line as it is written (keys in the schema order)', () => {
    fc.assert(
      fc.property(historyEvent, (event) => {
        const value = JSON.parse(encodeHistoryEvent(event)) as Record<string, unknown>
        const schema = [...MESSAGE_SCHEMAS, ...RECORD_SCHEMAS].find(
          (s) => (s.properties.role ?? s.properties.type)!.const === (value.role ?? value.type),
        )!
        const inSchemaOrder: Record<string, unknown> = { v: value.v }
        for (const key of Object.keys(schema.properties)) if (key in value) inSchemaOrder[key] = value[key]
        const copied = versionlessCopies[schema.$id!]!(inSchemaOrder, Object.keys(inSchemaOrder))
        expect(copied).toBeDefined()
        expectSameCopy(copied!, inSchemaOrder)
      }),
      { numRuns: 300 },
    )
  })

  it('exist for every record type that has a compiled check', () => {
    expect(Object.keys(versionlessCopies).sort()).toEqual(Object.keys(compiledChecks).sort())
  })

  it('refuses keys missing, doubled in order or unknown, so the generic copy takes them', () => {
    const copy = versionlessCopies.UserMessage!
    const user = { v: 1, role: 'user', id: 'u1', createdAt: 1, parts: [] as unknown[] }
    expect(copy(user, Object.keys(user))).toEqual({ role: 'user', id: 'u1', createdAt: 1, parts: [] })
    const { parts: _parts, ...noParts } = user
    expect(copy(noParts, Object.keys(noParts))).toBeUndefined()
    const withExtra = { ...user, origin: 'ide' }
    expect(copy(withExtra, Object.keys(withExtra))).toBeUndefined()
    const modeFirst = { v: 1, role: 'user', id: 'u1', createdAt: 1, mode: 'plan', parts: [] }
    expect(copy(modeFirst, Object.keys(modeFirst))).toBeUndefined()
  })
})
