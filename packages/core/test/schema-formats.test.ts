import { defineTool, type Tool } from '@kode/core'
import { FormatRegistry, type TSchema, Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { checkAnswer } from '../src/output/check-answer.js'
import { outputSpec } from '../src/output/output-spec.js'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { summarize } from './helpers/summarize.js'

/**
 * String formats: one with a checker in TypeBox's FormatRegistry is asserted; one without is an
 * annotation (JSON Schema's default), so it never refuses every call. Each test registers what it
 * needs and the registrations are removed after it, so no test sees another's.
 */
const registered: string[] = []

function register(format: string, check: (value: string) => boolean): void {
  FormatRegistry.Set(format, check)
  registered.push(format)
}

const isEmail = (value: string) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value)
const isUuid = (value: string) =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)

beforeEach(() => {
  // TypeBox registers no format itself: every format these tests use starts unknown.
  for (const format of ['email', 'uri', 'date-time', 'uuid']) expect(FormatRegistry.Has(format)).toBe(false)
})

afterEach(() => {
  for (const format of registered.splice(0)) FormatRegistry.Delete(format)
  vi.restoreAllMocks()
})

function toolWith<P extends TSchema>(parameters: P): Tool<P> {
  return defineTool({ name: 'send', description: '', parameters, execute: () => 'sent' })
}

const Mail = Type.Object({
  to: Type.String({ format: 'email' }),
  link: Type.Optional(Type.String({ format: 'uri' })),
  at: Type.Optional(Type.String({ format: 'date-time' })),
})

describe('tool arguments: string formats', () => {
  test('a format with no registered checker is not enforced: the call is accepted', () => {
    const tool = toolWith(Mail)
    const args = { to: 'not an address', link: 'not a uri', at: 'tomorrow-ish' }
    expect(tool.parseArguments(JSON.stringify(args))).toEqual({ ok: true, args })
  })

  test('the rest of a string with an unknown format is still checked, and the error never names the format', () => {
    const tool = toolWith(Mail)
    expect(tool.parseArguments('{"to":3,"link":"x"}')).toEqual({ ok: false, error: '/to: Expected string' })
    expect(tool.parseArguments('{"link":"x"}')).toEqual({
      ok: false,
      error: '/to: Expected required property',
    })
  })

  test('a format registered before the tool is defined is asserted, with an error naming it', () => {
    register('email', isEmail)
    const tool = toolWith(Mail)
    expect(tool.parseArguments('{"to":"ada@example.com"}')).toEqual({
      ok: true,
      args: { to: 'ada@example.com' },
    })
    expect(tool.parseArguments('{"to":"ada","link":"not a uri"}')).toEqual({
      ok: false,
      error: "/to: Expected string to match 'email' format",
    })
  })

  test('a format registered after the tool is defined is asserted from the next call; removed, it is an annotation again', () => {
    const tool = toolWith(Mail)
    expect(tool.parseArguments('{"to":"ada"}')).toMatchObject({ ok: true })
    register('email', isEmail)
    expect(tool.parseArguments('{"to":"ada"}')).toEqual({
      ok: false,
      error: "/to: Expected string to match 'email' format",
    })
    FormatRegistry.Delete('email')
    expect(tool.parseArguments('{"to":"ada"}')).toEqual({ ok: true, args: { to: 'ada' } })
  })

  test('a checker replaced in the registry is the one used', () => {
    register('email', () => false)
    const tool = toolWith(Mail)
    expect(tool.parseArguments('{"to":"ada@example.com"}')).toMatchObject({ ok: false })
    register('email', isEmail)
    expect(tool.parseArguments('{"to":"ada@example.com"}')).toMatchObject({ ok: true })
  })

  describe('nested, array, union, record and recursive schemas', () => {
    const Contacts = Type.Object({
      contacts: Type.Array(
        Type.Object({
          email: Type.String({ format: 'email' }),
          id: Type.Union([Type.String({ format: 'uuid' }), Type.Integer()]),
        }),
      ),
      seen: Type.Optional(Type.Record(Type.String(), Type.String({ format: 'date-time' }))),
      tree: Type.Optional(
        Type.Recursive((Node) =>
          Type.Object({ site: Type.String({ format: 'uri' }), children: Type.Array(Node) }),
        ),
      ),
    })
    const loose = {
      contacts: [
        { email: 'a', id: 'b' },
        { email: 'c', id: 7 },
      ],
      seen: { a: 'yesterday' },
      tree: { site: 'home', children: [{ site: 'away', children: [] }] },
    }

    test('unknown formats at every depth are annotations', () => {
      expect(toolWith(Contacts).parseArguments(JSON.stringify(loose))).toEqual({ ok: true, args: loose })
    })

    test('registered formats at every depth are asserted; unknown ones beside them are not reported', () => {
      register('email', isEmail)
      register('uuid', isUuid)
      const tool = toolWith(Contacts)
      expect(tool.parseArguments(JSON.stringify(loose))).toEqual({
        ok: false,
        error:
          "/contacts/0/email: Expected string to match 'email' format; /contacts/0/id: Expected union value; " +
          "/contacts/1/email: Expected string to match 'email' format",
      })
      const valid = {
        ...loose,
        contacts: [
          { email: 'a@b.io', id: '123e4567-e89b-12d3-a456-426614174000' },
          { email: 'c@d.io', id: 7 },
        ],
      }
      expect(tool.parseArguments(JSON.stringify(valid))).toEqual({ ok: true, args: valid })
    })

    test('a format deep in a recursive schema is asserted once registered', () => {
      register('uri', (value) => /^[a-z]+:/.test(value))
      const tool = toolWith(Contacts)
      const args = { contacts: [], tree: { site: 'https://a', children: [{ site: 'away', children: [] }] } }
      expect(tool.parseArguments(JSON.stringify(args))).toMatchObject({ ok: false })
      args.tree.children[0]!.site = 'https://b'
      expect(tool.parseArguments(JSON.stringify(args))).toEqual({ ok: true, args })
    })
  })

  test('the schema the model is offered is the one given, formats included', () => {
    const before = JSON.stringify(Mail)
    const tool = toolWith(Mail)
    expect(tool.parameters).toBe(Mail)
    tool.parseArguments('{"to":"ada"}')
    register('email', isEmail)
    tool.parseArguments('{"to":"ada"}')
    expect(JSON.stringify(tool.parameters)).toBe(before)
    expect(tool.parameters.properties.to.format).toBe('email')
  })

  test('defining a tool registers no format', () => {
    toolWith(Mail)
    expect(FormatRegistry.Entries().size).toBe(0)
  })

  test('compiled once while the registry is unchanged; once more at the first call after it changes', () => {
    const compile = vi.spyOn(TypeCompiler, 'Compile')
    const tool = toolWith(Mail)
    expect(compile).toHaveBeenCalledTimes(1)
    for (let i = 0; i < 3; i++) tool.parseArguments('{"to":"ada"}')
    expect(compile).toHaveBeenCalledTimes(1)
    register('email', isEmail)
    for (let i = 0; i < 3; i++) expect(tool.parseArguments('{"to":"ada"}')).toMatchObject({ ok: false })
    expect(compile).toHaveBeenCalledTimes(2)
  })

  test('where code generation is refused, the interpreted check follows the same rule', () => {
    vi.spyOn(TypeCompiler, 'Compile').mockImplementation(() => {
      throw new EvalError('Code generation from strings disallowed for this context')
    })
    const tool = toolWith(Mail)
    expect(tool.parseArguments('{"to":"ada","link":"x"}')).toEqual({
      ok: true,
      args: { to: 'ada', link: 'x' },
    })
    register('email', isEmail)
    expect(tool.parseArguments('{"to":"ada","link":"x"}')).toEqual({
      ok: false,
      error: "/to: Expected string to match 'email' format",
    })
  })
})

describe('structured output: string formats', () => {
  const Contact = Type.Object({
    email: Type.String({ format: 'email' }),
    site: Type.String({ format: 'uri' }),
  })

  test('an unknown format is an annotation; a registered one is asserted; the response format keeps both', () => {
    const spec = outputSpec(Contact)
    expect(spec.format.schema).toBe(Contact)
    expect(checkAnswer(spec.check, '{"email":"ada","site":"home"}', undefined)).toEqual({
      ok: true,
      value: { email: 'ada', site: 'home' },
    })
    register('email', isEmail)
    expect(checkAnswer(spec.check, '{"email":"ada","site":"home"}', undefined)).toEqual({
      ok: false,
      problems: ["/email: Expected string to match 'email' format"],
    })
  })
})

describe('end to end', () => {
  const harness = useHarness()

  test('a call with an unknown format runs; the request offers the schema with its format', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'send', { to: 'ada' })] }),
      textReply('r2', 'Done.'),
    )
    const { events } = await collect(h.createAgent({ tools: [toolWith(Mail)] }).run('go'))
    expect(summarize(events)).toContain('tool_result c1 success (last): sent')
    const body = h.server.requests[0]!.body as { tools: { function: { parameters: unknown } }[] }
    expect(body.tools[0]!.function.parameters).toEqual(JSON.parse(JSON.stringify(Mail)))
    expect(body.tools[0]!.function.parameters).toMatchObject({ properties: { to: { format: 'email' } } })
  })
})
