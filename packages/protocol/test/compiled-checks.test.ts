import { readFileSync } from 'node:fs'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CHECKS_FILE, renderCompiledChecks } from '../scripts/render-checks.js'
import { MESSAGE_SCHEMAS, RECORD_SCHEMAS } from '../src/codec/checked-schemas.js'
import { compiledChecks } from '../src/codec/compiled-checks.generated.js'
import { HistoryEvent } from '../src/history.js'
import { historyEvent } from './arbitraries.js'

describe('the compiled history checks', () => {
  it('match the schemas (run `pnpm --filter @kode/protocol compile-checks` after changing one)', () => {
    const committed = readFileSync(new URL(`../${CHECKS_FILE}`, import.meta.url), 'utf8')
    expect(committed).toBe(renderCompiledChecks())
  })

  it('cover every record type of a history, and nothing else', () => {
    const ids = [...MESSAGE_SCHEMAS, ...RECORD_SCHEMAS].map((schema) => schema.$id)
    expect(Object.keys(compiledChecks).sort()).toEqual([...ids].sort())
    expect(ids.sort()).toEqual(HistoryEvent.anyOf.map((schema) => schema.$id).sort())
  })

  it('decide as the schema does, on valid and broken records', () => {
    const schemas = [...MESSAGE_SCHEMAS, ...RECORD_SCHEMAS]
    const checks = schemas.map((schema) => ({ id: schema.$id!, check: TypeCompiler.Compile(schema) }))
    const broken = (event: object) => [
      event,
      { ...event, id: '' },
      { ...event, createdAt: 'now' },
      { ...event, parts: [{ type: 'text' }] },
      { ...event, status: 'done' },
    ]
    let accepted = 0
    fc.assert(
      fc.property(historyEvent, (event) => {
        for (const value of broken(event)) {
          for (const { id, check } of checks) {
            const ok = compiledChecks[id]!(value)
            expect(ok).toBe(check.Check(value))
            if (ok) accepted++
          }
        }
      }),
      { numRuns: 300 },
    )
    expect(accepted).toBeGreaterThanOrEqual(300)
  })
})
