import { JsonText, JsonTextCache } from '@kode/providers/adapter'
import { describe, expect, test } from 'vitest'
import { bodyJson } from '../../src/transport/json-text.js'

/** Values whose JSON is easy to get wrong by hand: escapes, lone surrogates, numbers, odd keys. */
function awkward(): Record<string, unknown> {
  return {
    text: 'héllo 日本語 🎉 \u2028\u2029 "quoted" \\ back\n\t\u0000\u001f\u007f </script>',
    lone: 'a lone \ud800, a lone \udfff, a pair 😀, a cut pair \ud83d',
    numbers: [
      0,
      -0,
      1e21,
      1e-7,
      0.1 + 0.2,
      5e-324,
      1.7976931348623157e308,
      -1.5,
      2 ** 53 + 1,
      NaN,
      -Infinity,
    ],
    nested: { a: [{ b: { c: [1, 'two', null, true, false, {}, []] } }], '': 'empty key', 10: 'an index key' },
    gone: undefined,
    fn: () => 1,
    date: new Date(0),
    holes: [undefined, () => 1, Symbol('s')],
  }
}

/** A list of messages shaped the way the wires nest them, kept values inside made-per-request turns. */
function turns(): { role: string; content: unknown[] }[] {
  const block = (i: number) => ({ type: 'text', text: `${i}: ${awkward().lone}`, extra: awkward() })
  return [
    { role: 'user', content: [block(1), block(2)] },
    { role: 'assistant', content: [{ type: 'tool_use', input: awkward() }] },
    { role: 'user', content: [block(3), undefined, 'plain'] },
  ]
}

describe('bodyJson', () => {
  test('is JSON.stringify for a body without JsonText', () => {
    for (const body of [awkward(), [1, 'a'], 'text', 42, null, { toJSON: () => ({ x: 1 }) }])
      expect(bodyJson(body)).toBe(JSON.stringify(body))
  })

  test('writes a JsonText field as its text, every other field as JSON.stringify does', () => {
    const messages = [awkward(), awkward()]
    const body = { model: 'm', messages: new JsonText(JSON.stringify(messages)), ...awkward() }
    expect(bodyJson(body)).toBe(JSON.stringify({ model: 'm', messages, ...awkward() }))
    // JSON.stringify of the body gives the same bytes, through JsonText.toJSON.
    expect(JSON.stringify(body)).toBe(bodyJson(body))
  })

  test('a whole body given as JsonText is sent as it is', () => {
    expect(bodyJson(new JsonText('{"a":1}'))).toBe('{"a":1}')
  })
})

describe('JsonTextCache', () => {
  test('a list of kept values is JSON.stringify of the list', () => {
    const values = [awkward(), 'text', 3, null, undefined, awkward().nested]
    expect(new JsonTextCache().list(values).text).toBe(JSON.stringify(values))
  })

  test('containers built per request are written field by field, byte for byte', () => {
    const cache = new JsonTextCache()
    for (const rebuilt of [0, 1, 2, 3, 6]) {
      const list = turns()
      expect(cache.list(list, rebuilt).text).toBe(JSON.stringify(list))
      // Again, now from the kept texts.
      expect(cache.list(list, rebuilt).text).toBe(JSON.stringify(list))
    }
  })

  test('a kept value is serialised once, however many requests send it', () => {
    let reads = 0
    const value = {
      get text() {
        reads++
        return 'read'
      },
    }
    const cache = new JsonTextCache()
    const first = cache.list([value]).text
    const wrapped = cache.list([{ role: 'user', content: [value] }], 2).text
    expect(first).toBe('[{"text":"read"}]')
    expect(wrapped).toBe('[{"role":"user","content":[{"text":"read"}]}]')
    expect(reads).toBe(1)
  })

  test('new values are serialised as they come; the kept ones are reused', () => {
    const cache = new JsonTextCache()
    const list: unknown[] = []
    for (let i = 0; i < 20; i++) {
      list.push(i % 3 === 0 ? { role: 'user', content: [awkward()] } : awkward())
      expect(cache.list(list, i % 2).text).toBe(JSON.stringify(list))
    }
  })
})
