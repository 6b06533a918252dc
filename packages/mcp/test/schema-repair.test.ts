import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { collect, toolResults, useHarness } from './support/harness.js'
import { call, response, say } from './support/model.js'

const harness = useHarness()
const SCRIPTED = fileURLToPath(new URL('./fixtures/scripted-server.mjs', import.meta.url))

/** The options of a bare server listing `tools` as they are, however odd. */
function scripted(tools: readonly Record<string, unknown>[]) {
  return { name: 'odd', command: process.execPath, args: [SCRIPTED, JSON.stringify(tools)] }
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
})
