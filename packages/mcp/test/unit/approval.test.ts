import { describe, expect, test } from 'vitest'
import { approvalFor } from '../../src/approval.js'

const tool = { name: 'fs__write_file', serverToolName: 'write_file' }

describe('needsApproval for one tool', () => {
  test('true, false or absent apply to every tool', () => {
    expect([approvalFor(true, tool), approvalFor(false, tool), approvalFor(undefined, tool)]).toEqual([
      true,
      false,
      false,
    ])
  })

  test("a list names the server's tools that need it", () => {
    expect([approvalFor(['write_file'], tool), approvalFor(['fs__write_file', 'edit_file'], tool)]).toEqual([
      true,
      false,
    ])
  })

  test('a function decides per call from the tool and the arguments', async () => {
    const approval = approvalFor(
      (info, args) => info.serverToolName === 'write_file' && args.path !== '/tmp/x',
      tool,
    )
    expect(typeof approval).toBe('function')
    if (typeof approval !== 'function') return
    expect([await approval({ path: '/etc/passwd' }), await approval({ path: '/tmp/x' })]).toEqual([
      true,
      false,
    ])
  })
})
