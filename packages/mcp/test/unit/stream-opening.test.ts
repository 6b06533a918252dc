import { describe, expect, test } from 'vitest'
import { statusDetail, streamOpenings } from '../../src/stream-opening.js'

const URL_ = 'http://127.0.0.1:8080/mcp'

function redirect(status: number, location?: string): Response {
  return new Response(null, { status, headers: location === undefined ? {} : { location } })
}

describe('streamOpenings: what a response to a GET opening an event stream counts as', () => {
  test('a 2xx opened it, a 405 says no such stream, any other status failed the attempt', () => {
    const openings = streamOpenings()
    expect(openings.answered(URL_, new Response('', { status: 200 }))).toEqual({ kind: 'opened' })
    expect(openings.answered(URL_, new Response(null, { status: 405 }))).toEqual({ kind: 'not-offered' })
    expect(openings.answered(URL_, new Response(null, { status: 500 }))).toEqual({
      kind: 'refused',
      status: 500,
    })
    const error = new Error('fetch failed')
    expect(openings.unreachable(error)).toEqual({ kind: 'unreachable', error })
  })

  test.each([
    ['a relative Location', 307, '/elsewhere'],
    ['the same origin', 302, 'http://127.0.0.1:8080/other'],
    ['its https form, both on default ports', 301, 'https://example.com/mcp', 'http://example.com/mcp'],
  ])('a redirect to %s is followed: no outcome of its own', (_name, status, location, from = URL_) => {
    expect(streamOpenings().answered(new URL(from), redirect(status, location))).toEqual({
      kind: 'redirected',
    })
  })

  test.each([
    ['another host', 302, 'http://example.invalid/mcp'],
    ['another port', 307, 'http://127.0.0.1:9090/mcp'],
    ['another scheme than its https form', 307, 'ftp://127.0.0.1:8080/mcp'],
    ['a URL adding a user name', 307, 'http://user@127.0.0.1:8080/mcp'],
    ['nowhere (no Location)', 302, undefined],
    ['a status the SDK does not follow (300)', 300, '/elsewhere'],
    ['a status the SDK does not follow (304)', 304, '/elsewhere'],
  ])('a redirect to %s is not followed: the attempt failed', (_name, status, location) => {
    expect(streamOpenings().answered(URL_, redirect(status, location))).toEqual({ kind: 'refused', status })
  })

  test('the sixth redirect of one attempt is not followed; the next attempt counts afresh', () => {
    const openings = streamOpenings()
    const loop = () => openings.answered(URL_, redirect(307, URL_))
    for (let i = 0; i < 5; i++) expect(loop()).toEqual({ kind: 'redirected' })
    expect(loop()).toEqual({ kind: 'refused', status: 307 })
    expect(loop()).toEqual({ kind: 'redirected' })
  })

  test('an error detail tells a redirect not followed from another status', () => {
    expect(statusDetail(500)).toBe('HTTP 500')
    expect(statusDetail(302)).toBe('HTTP 302, a redirect it does not follow')
  })
})
