'use strict'
// A stand-in for `tape`, just enough to run minimist's own test file offline with plain node:
// `node --require ./.eval-check/tape.cjs .eval-check/<file>.js`. Not part of minimist; written for the eval.
const assert = require('node:assert')
const Module = require('node:module')

const resolve = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  return request === 'tape' ? __filename : resolve.call(this, request, ...rest)
}

const tests = []
module.exports = function test (name, fn) {
  tests.push({ name, fn })
}

function runOne ({ name, fn }) {
  return new Promise((done) => {
    let planned = null
    let count = 0
    let finished = false
    const end = (error) => {
      if (finished) return
      finished = true
      done(error ? `not ok - ${name}: ${error.message}` : null)
    }
    const check = (assertion) => (...args) => {
      count++
      try {
        assertion(...args)
      } catch (error) {
        end(error)
        return
      }
      if (planned !== null && count === planned) end()
    }
    const t = {
      plan: (n) => { planned = n },
      end: () => end(),
      equal: check((a, b, message) => assert.strictEqual(a, b, message)),
      notEqual: check((a, b, message) => assert.notStrictEqual(a, b, message)),
      deepEqual: check((a, b, message) => assert.deepStrictEqual(a, b, message)),
      same: check((a, b, message) => assert.deepStrictEqual(a, b, message)),
      ok: check((value, message) => assert.ok(value, message)),
      notOk: check((value, message) => assert.ok(!value, message))
    }
    try {
      fn(t)
    } catch (error) {
      end(error)
    }
    setTimeout(() => end(new Error('the test did not end within 5 s')), 5000).unref()
  })
}

setImmediate(async () => {
  const failures = []
  for (const entry of tests) {
    const failure = await runOne(entry)
    if (failure) failures.push(failure)
  }
  for (const failure of failures) console.log(failure)
  console.log(`${tests.length - failures.length}/${tests.length} tests passed`)
  process.exitCode = failures.length === 0 && tests.length > 0 ? 0 : 1
})
