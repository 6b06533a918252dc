import { catalogModels, lookupModel } from '@kode/providers'
import { expect, test } from 'vitest'

test('dated ids and their aliases share one entry', () => {
  expect(lookupModel('anthropic', 'claude-sonnet-4-5-20250929')).toEqual(
    lookupModel('anthropic', 'claude-sonnet-4-5'),
  )
  expect(lookupModel('anthropic', 'claude-sonnet-4-5')?.prices).toEqual({
    input: 3,
    output: 15,
    cacheRead: 0.3,
    cacheWrite: 3.75,
  })
})

test('ids are exact: no guessing from name fragments', () => {
  expect(lookupModel('openai-chat', 'gpt-4o-mini-custom')).toBeUndefined()
  expect(lookupModel('openai-chat', 'constructor')).toBeUndefined()
})

test('catalogs are per api', () => {
  expect(lookupModel('anthropic', 'gpt-4o')).toBeUndefined()
  expect(lookupModel('openrouter', 'anthropic/claude-sonnet-4.5')?.prices).toBeUndefined()
  expect(catalogModels('unknown-api')).toEqual([])
  expect(catalogModels('anthropic')).toContain('claude-haiku-4-5')
})

test('host entries win over built-in ones', () => {
  expect(lookupModel('openai-chat', 'gpt-4o', { 'gpt-4o': { contextWindow: 1 } })).toEqual({
    contextWindow: 1,
  })
})

test("a Gemini model's resource name is the model of that id; a host entry under the name comes first", () => {
  const flash = lookupModel('google', 'gemini-2.5-flash')
  expect(flash?.reasoningControl).toBeDefined()
  expect(lookupModel('google', 'models/gemini-2.5-flash')).toEqual(flash)
  expect(
    lookupModel('google', 'models/gemini-2.5-flash', { 'models/gemini-2.5-flash': { contextWindow: 7 } }),
  ).toEqual({
    contextWindow: 7,
  })
  // Only Gemini names models so, and only under `models/`: nothing else is stripped.
  expect(lookupModel('google', 'tunedModels/gemini-2.5-flash')).toBeUndefined()
  expect(lookupModel('openai-chat', 'models/gpt-4o')).toBeUndefined()
})
