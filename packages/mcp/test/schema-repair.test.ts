import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { collect, toolResults, useHarness } from './support/harness.js'
import { call, response, say } from './support/model.js'

const harness = useHarness()
const SCRIPTED = fileURLToPath(new URL('./fixtures/scripted-server.mjs', import.meta.url))

/**
 * The options of a bare server listing `tools` as they are, however odd, and answering a call of a
 * tool named in `results` with that result (others echo their arguments).
 */
function scripted(tools: readonly Record<string, unknown>[], results: Record<string, unknown> = {}) {
  return {
    name: 'odd',
    command: process.execPath,
    args: [SCRIPTED, JSON.stringify(tools), JSON.stringify(results)],
  }
}

/** A tool result with `structuredContent`, and its JSON as the text. */
function structured(value: Record<string, unknown>) {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value }
}

/** The `parameters` of each tool in the model request `index`, by tool name. */
function offeredParameters(h: ReturnType<typeof harness>, index: number): Record<string, unknown> {
  const body = h.model.requests[index]!.body as {
    tools: { function: { name: string; parameters: unknown } }[]
  }
  return Object.fromEntries(body.tools.map((tool) => [tool.function.name, tool.function.parameters]))
}

describe('invalid JSON Schema that servers send is repaired before a provider sees it', () => {
  test('`properties: []` and a `required` that is not a list, at any depth', async () => {
    const h = harness()
    // How PHP encodes an empty object, and draft-03's `required: true`, where a strict provider
    // refuses the whole request (every tool with it) with a 400.
    const odd = await h.connect(
      scripted([
        { name: 'php', inputSchema: { type: 'object', properties: [] } },
        {
          name: 'flagged',
          inputSchema: {
            type: 'object',
            properties: {
              path: { type: 'string', required: true },
              opts: { type: 'object', properties: [], required: false },
              list: {
                type: 'array',
                items: { type: 'object', properties: { n: { type: 'integer', required: true } } },
              },
              either: { anyOf: [{ type: 'object', properties: [] }, { type: 'null' }] },
              map: {
                type: 'object',
                additionalProperties: { type: 'object', properties: [], required: 'yes' },
              },
              // A property named like a keyword is a property, not a keyword.
              required: { type: 'boolean' },
              node: { $ref: '#/$defs/node' },
            },
            required: true,
            $defs: { node: { type: 'object', properties: [], required: true } },
          },
        },
      ]),
    )
    h.model.enqueue(
      response(
        'r1',
        call('c1', 'odd__php', {}),
        call('c2', 'odd__flagged', {
          path: 'a',
          opts: {},
          list: [{}, { n: 2 }],
          either: null,
          map: { k: {} },
          node: {},
        }),
      ),
      response('r2', say('Done.')),
    )
    const agent = h.agent({ tools: odd.tools })
    await collect(agent.run('go'))
    expect(offeredParameters(h, 0)).toEqual({
      odd__php: { type: 'object', properties: {} },
      odd__flagged: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          opts: { type: 'object', properties: {} },
          list: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } },
          either: { anyOf: [{ type: 'object', properties: {} }, { type: 'null' }] },
          map: { type: 'object', additionalProperties: { type: 'object', properties: {} } },
          required: { type: 'boolean' },
          node: { $ref: '#/$defs/node' },
        },
        $defs: { node: { type: 'object', properties: {} } },
      },
    })
    // Valid arguments pass the check and reach the server (which echoes them).
    const results = toolResults(await agent.history())
    expect(results.c1).toMatchObject({ status: 'success', outputText: 'php {}' })
    expect(results.c2).toMatchObject({
      status: 'success',
      outputText: 'flagged {"path":"a","opts":{},"list":[{},{"n":2}],"either":null,"map":{"k":{}},"node":{}}',
    })
    // The check reads the repaired schema: what it says is still checked.
    const flagged = odd.tools[1]!
    expect(flagged.parseArguments('{"path":1}')).toMatchObject({ ok: false })
    expect(flagged.parseArguments('{"list":[{"n":"x"}]}')).toMatchObject({ ok: false })
    expect(flagged.parseArguments('{"map":{"k":1}}')).toMatchObject({ ok: false })
    expect(flagged.parseArguments('{"node":1}')).toMatchObject({ ok: false })
    expect(odd.tools[0]!.parseArguments('[]')).toMatchObject({ ok: false })
  })

  test('a schema that is only a `$ref` into its definitions is offered as the object it names', async () => {
    const h = harness()
    const node = { type: 'object', properties: { next: { $ref: '#/definitions/node' } } }
    const args = {
      type: 'object',
      properties: { q: { type: 'string' }, node: { $ref: '#/definitions/node' } },
      required: ['q'],
    }
    const odd = await h.connect(
      scripted([
        { name: 'search', inputSchema: { $ref: '#/definitions/args', definitions: { args, node } } },
        {
          name: 'find',
          inputSchema: {
            $schema: 'https://json-schema.org/draft/2020-12/schema',
            $ref: '#/$defs/args',
            description: 'what to find',
            $defs: { args: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
          },
        },
      ]),
    )
    h.model.enqueue(
      response(
        'r1',
        call('c1', 'odd__search', { q: 'x', node: { next: { next: {} } } }),
        call('c2', 'odd__find', { q: 'y' }),
      ),
      response('r2', say('Done.')),
    )
    const agent = h.agent({ tools: odd.tools })
    await collect(agent.run('go'))
    expect(offeredParameters(h, 0)).toEqual({
      odd__search: { ...args, definitions: { args, node } },
      odd__find: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        description: 'what to find',
        type: 'object',
        properties: { q: { type: 'string' } },
        required: ['q'],
        $defs: { args: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
      },
    })
    const results = toolResults(await agent.history())
    expect(results.c1).toMatchObject({
      status: 'success',
      outputText: 'search {"q":"x","node":{"next":{"next":{}}}}',
    })
    expect(results.c2).toMatchObject({ status: 'success', outputText: 'find {"q":"y"}' })
    const [search, find] = odd.tools
    expect(search!.parseArguments('{}')).toMatchObject({ ok: false })
    expect(search!.parseArguments('{"q":"x","node":{"next":1}}')).toMatchObject({ ok: false })
    expect(find!.parseArguments('{"q":1}')).toMatchObject({ ok: false })
  })

  test('a list of properties and `required` entries that are not strings are repaired, and no call that passes today is refused', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted([
        // A list names no property. Ajv cannot compile it, so arguments were only checked to be
        // an object: checking the repaired schema would refuse these arguments (`required`,
        // `additionalProperties`), so they are still not checked against it.
        {
          name: 'listed',
          inputSchema: {
            type: 'object',
            properties: [{ name: 'q', type: 'string' }],
            required: ['q'],
            additionalProperties: false,
          },
        },
        // Ajv requires a property named `5` and one named `null`: dropping them refuses less.
        {
          name: 'numbered',
          inputSchema: {
            type: 'object',
            properties: { a: { type: 'string' }, deep: { type: 'object', required: [true, 'b'] } },
            required: ['a', 5, null],
          },
        },
      ]),
    )
    h.model.enqueue(
      response(
        'r1',
        call('c1', 'odd__listed', { x: 1 }),
        call('c2', 'odd__numbered', { a: 'x', deep: { b: 1 } }),
      ),
      response('r2', say('Done.')),
    )
    const agent = h.agent({ tools: odd.tools })
    await collect(agent.run('go'))
    expect(offeredParameters(h, 0)).toEqual({
      odd__listed: { type: 'object', properties: {}, required: ['q'], additionalProperties: false },
      odd__numbered: {
        type: 'object',
        properties: { a: { type: 'string' }, deep: { type: 'object', required: ['b'] } },
        required: ['a'],
      },
    })
    const results = toolResults(await agent.history())
    expect(results.c1).toMatchObject({ status: 'success', outputText: 'listed {"x":1}' })
    expect(results.c2).toMatchObject({ status: 'success', outputText: 'numbered {"a":"x","deep":{"b":1}}' })
    const [listed, numbered] = odd.tools
    expect(listed!.parseArguments('{"anything":[1]}')).toMatchObject({ ok: true })
    expect(listed!.parseArguments('[]')).toMatchObject({ ok: false })
    // What the rest of the schema says is still checked.
    expect(numbered!.parseArguments('{"a":1}')).toMatchObject({ ok: false })
    expect(numbered!.parseArguments('{}')).toMatchObject({ ok: false })
    expect(numbered!.parseArguments('{"a":"x","deep":{}}')).toMatchObject({ ok: false })
  })

  test('an output schema is repaired the same way before structured content is checked against it', async () => {
    const h = harness()
    const odd = await h.connect(
      scripted(
        [
          // draft-03's `required: true`: Ajv could not compile it, so nothing was checked.
          {
            name: 'count',
            inputSchema: { type: 'object' },
            outputSchema: { type: 'object', properties: { n: { type: 'integer', required: true } } },
          },
          // How PHP encodes an empty object, and entries of `required` that are not strings.
          {
            name: 'php',
            inputSchema: { type: 'object' },
            outputSchema: { type: 'object', properties: [], required: ['id', 7] },
          },
          // Only a reference into its definitions.
          {
            name: 'referenced',
            inputSchema: { type: 'object' },
            outputSchema: {
              $ref: '#/definitions/out',
              definitions: {
                out: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
              },
            },
          },
          // A list of properties: still not checked against, as Ajv never could.
          {
            name: 'listed',
            inputSchema: { type: 'object' },
            outputSchema: { type: 'object', properties: [{ type: 'string' }], additionalProperties: false },
          },
        ],
        {
          count: structured({ n: 'three' }),
          php: structured({ name: 'no id' }),
          referenced: structured({ ok: 'yes' }),
          listed: structured({ anything: 1 }),
        },
      ),
    )
    const run = (name: string) =>
      odd.tools
        .find((tool) => tool.name === `odd__${name}`)!
        .execute({}, {
          signal: new AbortController().signal,
          progress: () => {},
        } as never) as Promise<{ status?: string; outputText: string }>
    const mismatch =
      /^odd__\w+ failed: MCP server "odd" answered with an error: MCP error -32602: Structured content does not match the tool's output schema: /
    for (const name of ['count', 'php', 'referenced']) {
      const result = await run(name)
      expect([name, result.status]).toEqual([name, 'error'])
      expect(result.outputText).toMatch(mismatch)
    }
    const listed = await run('listed')
    expect([listed.status, listed.outputText]).toEqual([undefined, '{"anything":1}'])
  })
})
