import type { ToolContext } from '@kode/core'
import { describe, expect, test } from 'vitest'
import { createCodeTool, nodeInterpreter } from '../src/index.js'

function context(): ToolContext {
  return {
    signal: new AbortController().signal,
    toolCallId: 'c1',
    toolName: 'code_execution',
    sessionId: 's1',
    responseId: undefined,
    resumed: false,
    progress: () => undefined,
    runSubAgent: () => Promise.reject(new Error('not in this test')),
  }
}

const tool = createCodeTool({
  interpreters: { javascript: nodeInterpreter },
  timeoutMs: 5000,
  outputLimit: 2000,
})

describe('the code tool', () => {
  test('returns what a program printed', async () => {
    expect(await tool.execute({ code: 'console.log(6 * 7)', language: 'javascript' }, context())).toEqual({
      status: 'success',
      outputText: '42',
    })
  })

  test('a failing program is an error result with its error and exit code', async () => {
    const result = await tool.execute({ code: 'throw new Error("boom")', language: 'javascript' }, context())
    expect(result).toMatchObject({ status: 'error', outputText: expect.stringContaining('Error: boom') })
    expect((result as { outputText: string }).outputText.endsWith('[exit code 1]')).toBe(true)
  })

  test('a program killed by a signal (its own, or an out-of-memory killer) says which', async () => {
    const code = 'console.log("before"); process.kill(process.pid, "SIGSEGV")'
    expect(await tool.execute({ code, language: 'javascript' }, context())).toEqual({
      status: 'error',
      outputText: 'before\n[killed by SIGSEGV]',
    })
  })

  test('a block without a language runs in the default one; an unknown language is an error', async () => {
    expect(await tool.execute({ code: 'console.log("hi")' }, context())).toMatchObject({ outputText: 'hi' })
    expect(await tool.execute({ code: 'puts 1', language: 'ruby' }, context())).toEqual({
      status: 'error',
      outputText: 'No interpreter for "ruby". Languages: javascript.',
    })
  })

  test("a language named like an object's own members is unknown too, not a lookup into the prototype", async () => {
    for (const language of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(await tool.execute({ code: '1', language }, context())).toEqual({
        status: 'error',
        outputText: `No interpreter for "${language.toLowerCase()}". Languages: javascript.`,
      })
    }
  })

  test('a program stopped at the output limit says so', async () => {
    const result = await tool.execute(
      { code: 'for (;;) console.log("y".repeat(100))', language: 'javascript' },
      context(),
    )
    expect(result).toMatchObject({
      status: 'error',
      outputText: expect.stringMatching(/\[output cut at 2000 bytes; the program was stopped\]$/),
    })
  })

  test('the description tells the model where and how code runs', () => {
    expect(tool.description).toContain('fresh, empty temporary directory (languages: javascript)')
    expect(tool.concurrent).toBe(false)
  })
})
