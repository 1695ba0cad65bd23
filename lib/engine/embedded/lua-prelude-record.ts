/**
 * The last part of the embedded engine's Lua prelude (lua-prelude.ts): the codec of codec.ts, Aerospike's record and
 * aerospike objects, the sandbox a module is loaded in and the entry point the runtime calls.
 */
export const LUA_RECORD = String.raw`
---------------------------------------------------------------------------------------------------------------
-- codec (see codec.ts)
---------------------------------------------------------------------------------------------------------------
local decode
decode = function(s, pos)
  local tag = sbyte(s, pos)
  if tag == T_BYTES then
    local str, np = sunpack('<s4', s, pos + 1)
    return newbytes(str), np
  elseif tag == T_INT then
    return sunpack('<i8', s, pos + 1)
  elseif tag == T_LIST then
    local n, p = sunpack('<I4', s, pos + 1)
    local v = {}
    for i = 1, n do v[i], p = decode(s, p) end
    return newlist(v, n), p
  elseif tag == T_MAP then
    local n, p = sunpack('<I4', s, pos + 1)
    local v = {}
    local k
    for _ = 1, n do
      k, p = decode(s, p)
      v[k], p = decode(s, p)
    end
    return newmap(v, n), p
  elseif tag == T_STRING then
    return sunpack('<s4', s, pos + 1)
  elseif tag == T_NIL then
    return nil, pos + 1
  elseif tag == T_TRUE then
    return true, pos + 1
  elseif tag == T_FALSE then
    return false, pos + 1
  elseif tag == T_FLOAT then
    return sunpack('<d', s, pos + 1)
  end
  error('corrupt value encoding (tag ' .. tostring(tag) .. ')')
end

local encode
encode = function(v, out, n)
  local t = type(v)
  if t == 'table' then
    local mt = getmetatable(v)
    if mt == BytesMT then
      n = n + 1; out[n] = spack('<Bs4', T_BYTES, bstr(v))
    elseif mt == ListMT then
      local vals, size = v._v, v._n
      n = n + 1; out[n] = spack('<BI4', T_LIST, size)
      for i = 1, size do n = encode(vals[i], out, n) end
    elseif mt == MapMT then
      n = n + 1; out[n] = spack('<BI4', T_MAP, v._n)
      for k, x in next, v._v do
        n = encode(k, out, n)
        n = encode(x, out, n)
      end
    else
      error('unsupported value: a plain Lua table (use list() or map())', 0)
    end
  elseif t == 'number' then
    n = n + 1
    if mtype(v) == 'integer' then out[n] = spack('<Bi8', T_INT, v) else out[n] = spack('<Bd', T_FLOAT, v) end
  elseif t == 'string' then
    n = n + 1; out[n] = spack('<Bs4', T_STRING, v)
  elseif t == 'nil' then
    n = n + 1; out[n] = '\0'
  elseif t == 'boolean' then
    n = n + 1; out[n] = v and '\2' or '\1'
  else
    error('unsupported value type: ' .. t, 0)
  end
  return n
end

local function encodeone(v)
  local out = {}
  encode(v, out, 0)
  return concat(out)
end

---------------------------------------------------------------------------------------------------------------
-- record and aerospike
---------------------------------------------------------------------------------------------------------------
local RecMT = {}
local ST = {} -- private key of a record's state
local REMOVED = {} -- a bin assigned nil
local OP_NONE, OP_WRITE, OP_REMOVE = 0, 1, 2
local TTL_UNSET = math.mininteger

local function state(rec)
  local st = type(rec) == 'table' and rawget(rec, ST)
  if not st then error('bad argument #1: record expected, got ' .. type(rec), 3) end
  return st
end

local function newrecord(blob, exists, gen, ttl, key)
  local order, starts, vstarts, ends = {}, {}, {}, {}
  local pos, len = 1, #blob
  while pos <= len do
    local name, vstart = sunpack('<s1', blob, pos)
    local vlen = sunpack('<I4', blob, vstart)
    order[#order + 1] = name
    starts[name] = pos
    vstarts[name] = vstart + 4
    ends[name] = vstart + 3 + vlen
    pos = vstart + 4 + vlen
  end
  local st = {
    blob = blob, order = order, starts = starts, vstarts = vstarts, ends = ends,
    vals = {}, dirty = {}, exists = exists, gen = gen, ttl = ttl, key = key,
    op = OP_NONE, setttl = TTL_UNSET, snapshot = '',
  }
  return setmetatable({ [ST] = st }, RecMT)
end

local function getbin(st, name)
  local v = st.vals[name]
  if v == REMOVED then return nil end
  if v ~= nil then return v end
  local at = st.vstarts[name]
  if at == nil or st.dirty[name] then return nil end
  v = decode(st.blob, at)
  if v ~= nil then st.vals[name] = v end
  return v
end

RecMT.__index = function(rec, name)
  if type(name) ~= 'string' then return nil end
  return getbin(rawget(rec, ST), name)
end
RecMT.__newindex = function(rec, name, v)
  if type(name) ~= 'string' then error('bin name must be a string', 2) end
  if #name == 0 or #name > 15 then error('bin name too long (max 15): ' .. name, 2) end
  local st = rawget(rec, ST)
  checkvalue(v)
  if st.starts[name] == nil and not st.dirty[name] then st.order[#st.order + 1] = name end
  st.dirty[name] = true
  if v == nil then st.vals[name] = REMOVED else st.vals[name] = v end
end
RecMT.__pairs = function() error('bad argument #1 to pairs (table expected, got userdata)', 2) end

local function snapshot(st)
  local out, n = {}, 0
  for _, name in ipairs(st.order) do
    if st.dirty[name] then
      local v = st.vals[name]
      if v ~= REMOVED then
        local ok, enc = pcall(encodeone, v)
        if not ok then error('bin ' .. name .. ': ' .. tostring(enc), 0) end
        n = n + 1; out[n] = spack('<s1s4', name, enc)
      end
    elseif st.starts[name] then
      n = n + 1; out[n] = ssub(st.blob, st.starts[name], st.ends[name])
    end
  end
  st.snapshot = concat(out)
end

record = {}
function record.gen(rec) return state(rec).gen end
function record.ttl(rec) return state(rec).ttl end
function record.set_ttl(rec, ttl) state(rec).setttl = checkint(ttl, 'ttl') end
function record.key(rec) return newbytes(state(rec).key) end
function record.bin_names(rec)
  local st = state(rec)
  local v, n = {}, 0
  for _, name in ipairs(st.order) do
    if getbin(st, name) ~= nil then
      n = n + 1; v[n] = name
    end
  end
  return newlist(v, n)
end
function record.numbins(rec) return record.bin_names(rec)._n end

aerospike = {}
function aerospike:exists(rec) return state(rec).exists end
function aerospike:create(rec)
  local st = state(rec)
  if st.exists then return 1 end
  snapshot(st)
  st.exists, st.op = true, OP_WRITE
  return 0
end
function aerospike:update(rec)
  local st = state(rec)
  if not st.exists then return 2 end
  snapshot(st)
  st.op = OP_WRITE
  return 0
end
function aerospike:remove(rec)
  local st = state(rec)
  if not st.exists then return 2 end
  st.exists, st.op = false, OP_REMOVE
  st.order, st.starts, st.vstarts, st.vals, st.dirty = {}, {}, {}, {}, {}
  return 0
end
function aerospike:log() end

local function logger(fmt, ...)
  if select('#', ...) > 0 then sformat(fmt, ...) end
end
local LOG = { trace = logger, debug = logger, info = logger, warn = logger }

---------------------------------------------------------------------------------------------------------------
-- sandbox, module loading and the call entry point
---------------------------------------------------------------------------------------------------------------
local SAFE = {
  'assert', 'error', 'ipairs', 'next', 'pairs', 'pcall', 'xpcall', 'rawequal', 'rawget', 'rawlen', 'rawset',
  'select', 'setmetatable', 'getmetatable', 'tonumber', 'tostring', 'type', '_VERSION',
}
local SANDBOX = {}
for _, name in ipairs(SAFE) do SANDBOX[name] = _G[name] end
for _, lib in ipairs({ 'string', 'table', 'math', 'utf8', 'coroutine' }) do
  local copy = {}
  for k, v in next, _G[lib] do copy[k] = v end
  SANDBOX[lib] = copy
end
SANDBOX.bytes, SANDBOX.list, SANDBOX.map, SANDBOX.record, SANDBOX.aerospike = bytes, list, map, record, aerospike
for k, v in next, LOG do SANDBOX[k] = v end
SANDBOX.print = function() end

local ENV = nil
local sourceload = load

function __load_module(name, src)
  local env = setmetatable({}, { __index = SANDBOX })
  env._G = env
  local chunk, err = sourceload(src, '@' .. name, 't', env)
  if not chunk then return 'E' .. tostring(err) end
  local ok, e = pcall(chunk)
  if not ok then return 'E' .. tostring(e) end
  ENV = env
  return 'O'
end

local function onerror(e)
  if type(e) == 'string' then return e end
  return tostring(e)
end

local function run(input)
  local fname, exists, gen, ttl, key, blob, args = sunpack('<s2Bi8i8s4s4s4', input)
  local f = ENV and rawget(ENV, fname)
  if type(f) ~= 'function' then error('function not found: ' .. fname, 0) end
  local argv = decode(args, 1)
  local rec = newrecord(blob, exists == 1, gen, ttl, key)
  local result = f(rec, tunpack(argv._v, 1, argv._n))
  local ok, enc = pcall(encodeone, result)
  if not ok then error('return value: ' .. tostring(enc), 0) end
  local st = rawget(rec, ST)
  return concat({ 'O', spack('<Bi8s4', st.op, st.setttl, st.snapshot), enc })
end

function __udf_call(input)
  local ok, out = xpcall(run, onerror, input)
  if ok then return out end
  return 'E' .. out
end

-- the host's globals are not reachable from modules; drop the unsafe libraries here too
io, os, debug, package, require, dofile, loadfile, load = nil, nil, nil, nil, nil, nil, nil, nil
`;
