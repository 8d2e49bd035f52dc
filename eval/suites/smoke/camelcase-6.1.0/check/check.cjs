'use strict'
// Hidden check for camelcase 6.1.0 (new `locale` option), written from the published behaviour
// change and readme; camelcase's tarball ships no tests. Needs Node's full ICU (the default build).
const assert = require('node:assert')
const camelCase = require('..')

assert.strictEqual(camelCase('lorem-ipsum', { locale: 'tr-TR' }), 'loremİpsum')
assert.strictEqual(camelCase('lorem-ipsum', { locale: 'en-US' }), 'loremIpsum')
assert.strictEqual(camelCase('lorem-ipsum', { locale: ['tr', 'TR', 'tr-TR'] }), 'loremİpsum')
assert.strictEqual(camelCase('lorem-ipsum', { locale: 'tr-TR', pascalCase: true }), 'Loremİpsum')
assert.strictEqual(camelCase('I', { locale: 'tr-TR' }), 'ı')
// What already worked keeps working.
assert.strictEqual(camelCase('lorem-ipsum'), 'loremIpsum')
assert.strictEqual(camelCase('Foo-Bar', { pascalCase: true }), 'FooBar')
console.log('ok')
