import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { checkAnswer } from '../../src/output/check-answer.js'
import { isStrictCompatible, outputSpec } from '../../src/output/output-spec.js'

describe('outputSpec', () => {
  test('strict mode is asked for only when every object is closed and requires all its properties', () => {
    const closed = Type.Object(
      {
        name: Type.String(),
        tags: Type.Array(Type.Object({ label: Type.String() }, { additionalProperties: false })),
        kind: Type.Union([Type.Literal('a'), Type.Literal('b')]),
      },
      { additionalProperties: false },
    )
    expect(outputSpec(closed).format.strict).toBe(true)
    // TypeBox leaves objects open unless told otherwise.
    expect(isStrictCompatible(Type.Object({ name: Type.String() }))).toBe(false)
    // An optional property is not required.
    expect(
      isStrictCompatible(
        Type.Object({ name: Type.Optional(Type.String()) }, { additionalProperties: false }),
      ),
    ).toBe(false)
    // An open object deep inside counts too.
    expect(
      isStrictCompatible(
        Type.Object(
          { items: Type.Array(Type.Object({ x: Type.Number() })) },
          { additionalProperties: false },
        ),
      ),
    ).toBe(false)
  })

  test('strict mode is not asked for a schema using what OpenAI strict mode refuses (the API answers 400)', () => {
    const closed = <T extends Record<string, ReturnType<typeof Type.String>>>(props: T) =>
      Type.Object(props, { additionalProperties: false })
    const wrap = (inner: object) => ({
      type: 'object',
      properties: { v: inner },
      required: ['v'],
      additionalProperties: false,
    })
    // Composition strict mode does not support: TypeBox Intersect (allOf), Not, oneOf, if/then/else.
    expect(
      isStrictCompatible(wrap(Type.Intersect([closed({ a: Type.String() }), closed({ b: Type.String() })]))),
    ).toBe(false)
    expect(isStrictCompatible(wrap(Type.Not(Type.String())))).toBe(false)
    expect(isStrictCompatible(wrap({ oneOf: [{ type: 'string' }, { type: 'number' }] }))).toBe(false)
    expect(isStrictCompatible(wrap(JSON.parse('{"type":"string","if":{"minLength":1},"then":{}}')))).toBe(
      false,
    )
    expect(isStrictCompatible(wrap({ ...closed({}), patternProperties: { '^x': { type: 'string' } } }))).toBe(
      false,
    )
    // String formats beyond the ones strict mode knows.
    expect(isStrictCompatible(wrap(Type.String({ format: 'uri' })))).toBe(false)
    expect(isStrictCompatible(wrap(Type.String({ format: 'date-time' })))).toBe(true)
    expect(isStrictCompatible(wrap(Type.String({ format: 'email' })))).toBe(true)
    // What it does support stays strict: anyOf, $defs/$ref, enums, nullable unions.
    expect(isStrictCompatible(wrap(Type.Union([Type.String(), Type.Null()])))).toBe(true)
    expect(
      outputSpec(Type.Object({ u: Type.String({ format: 'uri' }) }, { additionalProperties: false })).format
        .strict,
    ).toBe(false)
  })

  test('the name comes from $id or title, made to fit [a-zA-Z0-9_-]{1,64}; the description goes along', () => {
    expect(outputSpec(Type.Object({}, { $id: 'Weather' })).format.name).toBe('Weather')
    expect(outputSpec(Type.Object({}, { title: 'A weather report!' })).format.name).toBe('A_weather_report')
    expect(outputSpec(Type.Object({}, { title: 'x'.repeat(80) })).format.name).toHaveLength(64)
    expect(outputSpec(Type.Object({}, { description: 'The forecast' })).format).toEqual({
      type: 'json_schema',
      name: 'output',
      schema: Type.Object({}, { description: 'The forecast' }),
      strict: false,
      description: 'The forecast',
    })
  })
})

describe('checkAnswer', () => {
  const check = outputSpec(Type.Object({ n: Type.Integer() })).check

  test('lists where the value breaks the schema', () => {
    expect(checkAnswer(check, '{"n":1.5}', undefined)).toEqual({
      ok: false,
      problems: ['/n: Expected integer'],
    })
    expect(checkAnswer(check, '[1]', undefined)).toEqual({
      ok: false,
      problems: ['(root): Expected object'],
    })
  })

  test('an empty answer and text that is not JSON say so', () => {
    expect(checkAnswer(check, '  ', undefined)).toEqual({
      ok: false,
      problems: ['the answer is empty, not a JSON object'],
    })
    expect(checkAnswer(check, 'n is 1', undefined)).toEqual({
      ok: false,
      problems: ['the answer is not JSON'],
    })
  })

  test('the last text part is read when the whole answer is not JSON', () => {
    const message = {
      role: 'assistant' as const,
      id: 'm1',
      createdAt: 0,
      parts: [
        { type: 'text' as const, text: 'Here:' },
        { type: 'text' as const, text: '{"n":2}' },
      ],
    }
    expect(checkAnswer(check, 'Here:{"n":2}', message)).toEqual({ ok: true, value: { n: 2 } })
  })
})
