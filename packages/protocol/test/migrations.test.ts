import { HISTORY_FORMAT_VERSION } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { HISTORY_MIGRATIONS, type Migration, migrateToCurrent } from '../src/codec/migrations.js'

// A fake two-step history: version 1 named the text `body`, version 2 renamed it `text`, and
// version 3 added `lang`. Each step records that it ran, to check order and count.
const toV2: Migration = ({ body, ...rest }) => ({ ...rest, text: body, steps: [...steps(rest), 'v2'] })
const toV3: Migration = (record) => ({ ...record, lang: 'en', steps: [...steps(record), 'v3'] })
const fake = [toV2, toV3]
const steps = (record: Record<string, unknown>) => (record.steps as string[] | undefined) ?? []

describe('migrateToCurrent', () => {
  test('a record of the first version goes through every migration, in order', () => {
    expect(migrateToCurrent({ id: 'a', body: 'hi' }, 1, fake)).toEqual({
      id: 'a',
      text: 'hi',
      lang: 'en',
      steps: ['v2', 'v3'],
    })
  })

  test('a record of a later version skips the migrations before it', () => {
    expect(migrateToCurrent({ id: 'a', text: 'hi' }, 2, fake)).toEqual({
      id: 'a',
      text: 'hi',
      lang: 'en',
      steps: ['v3'],
    })
  })

  test('a record of the current version is returned as it is', () => {
    const record = { id: 'a', text: 'hi', lang: 'en' }
    expect(migrateToCurrent(record, 3, fake)).toBe(record)
  })

  test.each([0, 4, 1.5, Number.NaN])('version %s has no migration path and is refused', (version) => {
    expect(() => migrateToCurrent({}, version, fake)).toThrow(RangeError)
  })

  test("the real migrations lead to the codec's current version", () => {
    expect(HISTORY_MIGRATIONS.length + 1).toBe(HISTORY_FORMAT_VERSION)
    const record = { role: 'user' }
    expect(migrateToCurrent(record, HISTORY_FORMAT_VERSION)).toBe(record)
  })
})
