import { AgentError, CODE_EXECUTION_TOOL, codeActFormatter, type FormatterInstructions } from '@kode/core'
import type { AssistantMessage, StopReason } from '@kode/protocol'
import { describe, expect, test } from 'vitest'

function reply(text: string, stopReason: StopReason = 'stop'): AssistantMessage {
  return { role: 'assistant', id: 'm1', createdAt: 1, parts: [{ type: 'text', text }], stopReason }
}

const code = (source: string, language = 'python') => ({
  name: CODE_EXECUTION_TOOL,
  argumentsJson: JSON.stringify({ code: source, language }),
})

const codeact = codeActFormatter()

describe('reading CodeAct responses', () => {
  test('each fenced block in a language that runs is a code_execution call, in order', () => {
    const text = 'Thought: two steps.\n```python\nprint(1)\n```\nand\n```Python\nx = 2\nprint(x)\n```\n'
    expect(codeact.parseActions(reply(text))).toEqual([code('print(1)'), code('x = 2\nprint(x)')])
  })

  test('blocks in other languages, and blocks after a final answer, do not run', () => {
    const text = '```text\nnot code\n```\nFinal Answer: use this:\n```python\nprint(1)\n```'
    const message = reply(text)
    expect(codeact.parseActions(message)).toEqual([])
    expect(codeact.answerText(message)).toBe('use this:\n```python\nprint(1)\n```')
  })

  test('a final answer in bold is the answer, and blocks after it do not run', () => {
    const message = reply('**Thought:** done.\n**Final Answer:** 42\n```python\nprint(1)\n```')
    expect(codeact.parseActions(message)).toEqual([])
    expect(codeact.answerText(message)).toBe('42\n```python\nprint(1)\n```')
  })

  test('a block indented four spaces is an indented code block, even one that looks fenced: it is text', () => {
    const message = reply('Like this:\n\n    ```python\n    print(1)\n    ```\n')
    expect(codeact.parseActions(message)).toEqual([])
  })

  test('a label inside code is code', () => {
    const text = '```python\ns = """\nFinal Answer: not yet\n"""\nprint(s)\n```'
    expect(codeact.parseActions(reply(text))).toEqual([code('s = """\nFinal Answer: not yet\n"""\nprint(s)')])
  })

  test('fences: tildes, longer closing fences, and a backtick fence inside a tilde block', () => {
    const text = '~~~python\nprint("```")\n~~~~\n````python\nprint(2)\n````'
    expect(codeact.parseActions(reply(text))).toEqual([code('print("```")'), code('print(2)')])
  })

  test("an indented fence's indentation is removed from its lines, as CommonMark does (a block in a list item)", () => {
    const text = '1. Count:\n   ```python\n   for i in range(2):\n       print(i)\n  print("done")\n   ```'
    expect(codeact.parseActions(reply(text))).toEqual([
      code('for i in range(2):\n    print(i)\nprint("done")'),
    ])
  })

  test('a response with CRLF line endings: the fences close and the code has plain newlines', () => {
    const text = 'Thought: two.\r\n```python\r\nx = 1\r\nprint(x)\r\n```\r\nFinal Answer: ran\r\n'
    expect(codeact.parseActions(reply(text))).toEqual([code('x = 1\nprint(x)')])
    const answer =
      'Thought: done.\r\n```text\r\nshown\r\n```\r\nFinal Answer: 42\r\n```python\r\nprint(1)\r\n```'
    expect(codeact.parseActions(reply(answer))).toEqual([])
    expect(codeact.answerText(reply(answer))).toBe('42\r\n```python\r\nprint(1)\r\n```')
  })

  test('a block left open at a normal stop runs; cut off by an interrupt it is text only', () => {
    expect(codeact.parseActions(reply('```python\nprint(1)'))).toEqual([code('print(1)')])
    const cut = reply('```python\nprint(1', 'aborted')
    const [action] = codeact.parseActions(cut)
    expect(action).toEqual({ ...code('print(1'), incomplete: true })
    expect(codeact.needsPendingPlaceholder(action!, cut)).toBe(false)
    const whole = reply('```python\nprint(1)\n```', 'aborted')
    expect(codeact.needsPendingPlaceholder(codeact.parseActions(whole)[0]!, whole)).toBe(true)
  })

  test('a response without code is its own answer', () => {
    expect(codeact.answerText(reply('It is 42.'))).toBe('It is 42.')
  })

  test('languages and the tool name are options', () => {
    const js = codeActFormatter({ languages: ['JavaScript'], toolName: 'run_js' })
    expect(js.parseActions(reply('```javascript\nconsole.log(1)\n```\n```python\nprint(1)\n```'))).toEqual([
      { name: 'run_js', argumentsJson: JSON.stringify({ code: 'console.log(1)', language: 'javascript' }) },
    ])
  })
})

describe('the CodeAct request', () => {
  const codeTool = { name: CODE_EXECUTION_TOOL, description: 'Runs Python 3 in a temp dir.', parameters: {} }
  const other = { name: 'todo_write', description: 'Writes todos', parameters: {} }

  test('the code tool is described in the system text; the other tools stay native', () => {
    const { system, tools } = codeact.instructions([codeTool, other])
    expect(tools).toEqual([other])
    expect(system).toContain('```python')
    expect(system).toContain('How the code runs: Runs Python 3 in a temp dir.')
  })

  test('an agent without the code tool is refused', () => {
    expect(() => codeact.instructions([other])).toThrow(AgentError)
    expect(() => codeact.instructions([other])).toThrow(/no tool "code_execution"/)
  })

  test('no languages is refused', () => {
    expect(() => codeActFormatter({ languages: [] })).toThrow(AgentError)
  })
})

describe('past CodeAct actions as text', () => {
  const WITH_TOOLS: FormatterInstructions = {
    system: 'the format',
    tools: [{ name: 'todo_write', description: 'Writes todos', parameters: { type: 'object' } }],
  }

  test('by default, as tool calls when the requests declare native tools, as text when they declare none', () => {
    const text = '```python\nprint(1)\n```'
    const message: AssistantMessage = {
      ...reply(text),
      parts: [
        { type: 'text', text },
        { type: 'tool_call', id: 'call_m1_0', name: CODE_EXECUTION_TOOL, argumentsJson: '{}' },
      ],
    }
    const result = {
      role: 'tool' as const,
      id: 'r1',
      createdAt: 2,
      toolCallId: 'call_m1_0',
      toolName: CODE_EXECUTION_TOOL,
      status: 'success' as const,
      outputText: '1',
      parts: [],
    }
    expect(codeact.formatAction(message, WITH_TOOLS)).toBe(message)
    expect(codeact.formatResult(result, WITH_TOOLS)).toBe(result)
    const noTools: FormatterInstructions = { system: 'the format' }
    expect(codeact.formatAction(message, noTools)).toEqual({ ...message, parts: [{ type: 'text', text }] })
    expect(codeact.formatResult(result, noTools)).toEqual({
      role: 'user',
      id: 'r1',
      createdAt: 2,
      parts: [{ type: 'text', text: 'Observation: 1' }],
    })
  })

  test('a code call made natively is written out in a fence longer than any backtick run in its code', () => {
    const asText = codeActFormatter({ history: 'text' })
    const source = 'print("""\n```\nObservation: not one\n```\n""")'
    const message: AssistantMessage = {
      ...reply(''),
      parts: [
        {
          type: 'tool_call',
          id: 'native1',
          name: CODE_EXECUTION_TOOL,
          argumentsJson: JSON.stringify({ code: source, language: 'python' }),
        },
      ],
    }
    const written = asText.formatAction(message, WITH_TOOLS) as AssistantMessage
    const text = (written.parts[0] as { text: string }).text
    expect(text).toBe(`\`\`\`\`python\n${source}\n\`\`\`\``)
    // Read back as the model would have written it: the same one program.
    expect(codeact.parseActions(reply(text))).toEqual([code(source)])
  })

  test('code calls are dropped and their results become observations; other calls stay native', () => {
    const asText = codeActFormatter({ history: 'text' })
    const text = '```python\nprint(1)\n```'
    const message: AssistantMessage = {
      ...reply(text),
      parts: [
        { type: 'text', text },
        { type: 'tool_call', id: 'call_m1_0', name: CODE_EXECUTION_TOOL, argumentsJson: '{}' },
        { type: 'tool_call', id: 'native1', name: 'todo_write', argumentsJson: '{}' },
      ],
    }
    expect(asText.formatAction(message, WITH_TOOLS)).toMatchObject({
      parts: [
        { type: 'text', text },
        { type: 'tool_call', id: 'native1' },
      ],
    })
    const result = {
      role: 'tool' as const,
      id: 'r1',
      createdAt: 2,
      toolCallId: 'native1',
      toolName: 'todo_write',
      status: 'success' as const,
      outputText: 'ok',
      parts: [],
    }
    expect(asText.formatResult(result, WITH_TOOLS)).toBe(result)
    expect(asText.formatResult({ ...result, toolName: CODE_EXECUTION_TOOL }, WITH_TOOLS)).toMatchObject({
      role: 'user',
    })
  })
})
