/**
 * Lua side of the embedded engine: Aerospike's UDF API (record, aerospike, bytes, list, map, logging) as Lua
 * metatables, the codec of codec.ts, a sandbox for the module and the entry points the runtime calls.
 *
 * Semantics follow aerospike-mod-lua: bytes(n) reserves capacity and starts empty, set_byte / b[i] = v grows the
 * size, reads outside the size give nil, bytes.set_size only reserves capacity; list{...} keeps numeric keys in
 * order and skips nils, l[i] = v beyond the size grows the list with nil elements, take/drop give nil for n <= 0;
 * map keys are integers or strings, assigning nil removes a key. Bin changes are written only by aerospike:create /
 * aerospike:update (a snapshot of the record at that call); a record left with no bins is deleted.
 *
 * Deviations: the objects are Lua tables, so type(x) is 'table' where Aerospike says 'userdata'; pairs() on a list
 * or map raises (as on Aerospike's userdata) and ipairs() works (as in Aerospike).
 */
export const LUA_PRELUDE = String.raw`
local spack, sunpack, sbyte, ssub, schar, srep, sformat =
  string.pack, string.unpack, string.byte, string.sub, string.char, string.rep, string.format
local concat, tunpack, tsort = table.concat, table.unpack, table.sort
local mtype, tointeger = math.type, math.tointeger
local setmetatable, getmetatable, rawget, rawset, type, error, tostring, next, pcall, xpcall, select =
  setmetatable, getmetatable, rawget, rawset, type, error, tostring, next, pcall, xpcall, select

local T_NIL, T_FALSE, T_TRUE, T_INT, T_FLOAT, T_STRING, T_BYTES, T_LIST, T_MAP = 0, 1, 2, 3, 4, 5, 6, 7, 8

local function toint(i)
  if mtype(i) == 'integer' then return i end
  if type(i) == 'number' then return tointeger(i) end
  return nil
end

local function checkint(v, what)
  local i = toint(v)
  if i == nil then error(sformat('bad argument (%s): integer expected, got %s', what, type(v)), 3) end
  return i
end

---------------------------------------------------------------------------------------------------------------
-- bytes
---------------------------------------------------------------------------------------------------------------
local BytesMT = {}
-- A bytes value is held as a string (s) or, after per-byte writes, as an array of byte values (t, size n); each
-- operation converts to the form it needs. Fields are never nil (false when unused) so reads skip __index.
local function newbytes(s) return setmetatable({ s = s, t = false, n = 0 }, BytesMT) end

local function checkbytes(b)
  if getmetatable(b) ~= BytesMT then error('bad argument #1: bytes expected, got ' .. type(b), 3) end
  return b
end

local CHUNK = 4096
local function bstr(b)
  local t = b.t
  if t then
    local n, parts = b.n, {}
    for i = 1, n, CHUNK do
      local j = i + CHUNK - 1
      if j > n then j = n end
      parts[#parts + 1] = schar(tunpack(t, i, j))
    end
    b.s, b.t = concat(parts), false
  end
  return b.s
end

local function btab(b)
  local t = b.t
  if not t then
    local s = b.s
    local n = #s
    t = {}
    for i = 1, n, CHUNK do
      local j = i + CHUNK - 1
      if j > n then j = n end
      local k = i
      for _, v in ipairs({ sbyte(s, i, j) }) do t[k] = v; k = k + 1 end
    end
    b.t, b.n, b.s = t, n, false
  end
  return t
end

local function bsize(b)
  if b.t then return b.n end
  return #b.s
end

-- writes string v at 1-based index i, growing the size (zero filled) as needed
local function putat(b, i, v)
  local s = bstr(b)
  local n = #s
  if i > n + 1 then s = s .. srep('\0', i - 1 - n) end
  b.s = ssub(s, 1, i - 1) .. v .. ssub(s, i + #v)
  return true
end

local function get_byte(b, i)
  checkbytes(b)
  i = toint(i)
  if i == nil or i < 1 then return nil end
  local t = b.t
  if t then
    if i > b.n then return nil end
    return t[i]
  end
  return (sbyte(b.s, i))
end

local function set_byte(b, i, v)
  checkbytes(b)
  i = checkint(i, 'index'); v = checkint(v, 'value')
  if i < 1 or v < 0 or v > 255 then return false end
  local t = btab(b)
  local n = b.n
  if i > n then
    for k = n + 1, i - 1 do t[k] = 0 end
    b.n = i
  end
  t[i] = v
  return true
end

-- metamethods: the object is known to be bytes, so skip the argument checks of the module functions
BytesMT.__index = function(b, i)
  if mtype(i) ~= 'integer' then return get_byte(b, i) end
  if i < 1 then return nil end
  local t = b.t
  if t then
    if i > b.n then return nil end
    return t[i]
  end
  return (sbyte(b.s, i))
end
BytesMT.__newindex = function(b, i, v)
  local t = b.t
  if t and mtype(i) == 'integer' and i >= 1 and i <= b.n and mtype(v) == 'integer' and v >= 0 and v <= 255 then
    t[i] = v
    return
  end
  set_byte(b, i, v)
end
BytesMT.__len = bsize
BytesMT.__tostring = function(b)
  return 'Bytes(' .. (bstr(b):gsub('.', function(c) return sformat('%02X', sbyte(c)) end)) .. ')'
end
BytesMT.__pairs = function() error('bad argument #1 to pairs (table expected, got userdata)', 2) end

bytes = {}
setmetatable(bytes, { __call = function() return newbytes('') end })

function bytes.size(b) return bsize(checkbytes(b)) end
-- aerospike-mod-lua maps set_size to as_bytes_ensure: it reserves capacity, the size is unchanged
function bytes.set_size(b, n)
  checkbytes(b)
  n = checkint(n, 'size')
  return n >= 0
end
bytes.get_byte = get_byte
bytes.set_byte = set_byte
function bytes.get_type(b) checkbytes(b); return 4 end
function bytes.set_type(b) checkbytes(b) end

local function readat(b, i, n)
  local s = bstr(b)
  local got = ssub(s, i, i + n - 1)
  if #got < n then got = got .. srep('\0', n - #got) end
  return got
end

function bytes.get_bytes(b, i, n)
  checkbytes(b)
  i = toint(i); n = toint(n)
  if i == nil or n == nil or i < 1 or n < 0 then return nil end
  return newbytes(readat(b, i, n))
end
function bytes.get_string(b, i, n)
  checkbytes(b)
  i = toint(i); n = toint(n)
  if i == nil or n == nil or i < 1 or n < 0 then return nil end
  return readat(b, i, n)
end
function bytes.set_bytes(b, i, v, n)
  checkbytes(b); checkbytes(v)
  i = checkint(i, 'index'); n = checkint(n, 'length')
  if i < 1 or n < 0 then return false end
  return putat(b, i, ssub(bstr(v), 1, n))
end
function bytes.set_string(b, i, v)
  checkbytes(b)
  i = checkint(i, 'index')
  if i < 1 or type(v) ~= 'string' then return false end
  return putat(b, i, v)
end
function bytes.append_bytes(b, v, n)
  checkbytes(b); checkbytes(v)
  n = checkint(n, 'length')
  if n < 0 then return false end
  b.s = bstr(b) .. ssub(bstr(v), 1, n)
  return true
end
function bytes.append_string(b, v)
  checkbytes(b)
  if type(v) ~= 'string' or #v == 0 then return false end
  b.s = bstr(b) .. v
  return true
end
function bytes.append_byte(b, v)
  checkbytes(b)
  v = checkint(v, 'value')
  if v < 0 or v > 255 then return false end
  b.s = bstr(b) .. schar(v)
  return true
end

local INTS = {
  int16 = { '>i2', 2, -32768, 32767 }, int16_be = { '>i2', 2, -32768, 32767 }, int16_le = { '<i2', 2, -32768, 32767 },
  int32 = { '>i4', 4, -2147483648, 2147483647 }, int32_be = { '>i4', 4, -2147483648, 2147483647 },
  int32_le = { '<i4', 4, -2147483648, 2147483647 },
  int64 = { '>i8', 8, math.mininteger, math.maxinteger }, int64_be = { '>i8', 8, math.mininteger, math.maxinteger },
  int64_le = { '<i8', 8, math.mininteger, math.maxinteger },
}
for suffix, spec in pairs(INTS) do
  local fmt, size, lo, hi = spec[1], spec[2], spec[3], spec[4]
  bytes['get_' .. suffix] = function(b, i)
    checkbytes(b)
    i = toint(i)
    if i == nil or i < 1 or i + size - 1 > bsize(b) then return nil end
    return (sunpack(fmt, bstr(b), i))
  end
  bytes['set_' .. suffix] = function(b, i, v)
    checkbytes(b)
    i = checkint(i, 'index'); v = checkint(v, 'value')
    if i < 1 or v < lo or v > hi then return false end
    return putat(b, i, spack(fmt, v))
  end
  bytes['append_' .. suffix] = function(b, v)
    checkbytes(b)
    v = checkint(v, 'value')
    if v < lo or v > hi then return false end
    b.s = bstr(b) .. spack(fmt, v)
    return true
  end
end

---------------------------------------------------------------------------------------------------------------
-- list and map
---------------------------------------------------------------------------------------------------------------
local ListMT, MapMT = {}, {}
local function newlist(v, n) return setmetatable({ _v = v, _n = n }, ListMT) end
local function newmap(v, n) return setmetatable({ _v = v, _n = n }, MapMT) end

-- the values a bin, list element or map value may hold
local function checkvalue(v)
  local t = type(v)
  if t == 'table' then
    local mt = getmetatable(v)
    if mt ~= BytesMT and mt ~= ListMT and mt ~= MapMT then
      error('unsupported value: a plain Lua table (use list() or map())', 3)
    end
  elseif t ~= 'nil' and t ~= 'boolean' and t ~= 'number' and t ~= 'string' then
    error('unsupported value type: ' .. t, 3)
  end
  return v
end

local function checklist(l)
  if getmetatable(l) ~= ListMT then error('bad argument #1: list expected, got ' .. type(l), 3) end
  return l
end
local function checkmap(m)
  if getmetatable(m) ~= MapMT then error('bad argument #1: map expected, got ' .. type(m), 3) end
  return m
end

ListMT.__index = function(l, i)
  i = toint(i)
  if i == nil or i < 1 then return nil end
  return l._v[i]
end
ListMT.__newindex = function(l, i, v)
  i = toint(i)
  if i == nil or i < 1 then return end
  l._v[i] = checkvalue(v)
  if i > l._n then l._n = i end
end
ListMT.__len = function(l) return l._n end
ListMT.__pairs = function() error('bad argument #1 to pairs (table expected, got userdata)', 2) end

local tostr
local function listtostring(l)
  local parts = {}
  for i = 1, l._n do parts[i] = tostr(l._v[i]) end
  return 'List(' .. concat(parts, ',') .. ')'
end
local function maptostring(m)
  local parts = {}
  for k, v in next, m._v do parts[#parts + 1] = tostr(k) .. '->' .. tostr(v) end
  return 'Map(' .. concat(parts, ',') .. ')'
end
tostr = function(v) if v == nil then return 'NIL' end return tostring(v) end
ListMT.__tostring = listtostring
MapMT.__tostring = maptostring

local function checkkey(k)
  local t = type(k)
  if t == 'number' then
    local i = toint(k)
    if i == nil then error('unsupported map key: a float', 3) end
    return i
  end
  if t ~= 'string' then error('unsupported map key type: ' .. t, 3) end
  return k
end

MapMT.__index = function(m, k) return m._v[k] end
MapMT.__newindex = function(m, k, v)
  k = checkkey(k)
  local vals = m._v
  if v == nil then
    if vals[k] ~= nil then m._n = m._n - 1 end
  else
    checkvalue(v)
    if vals[k] == nil then m._n = m._n + 1 end
  end
  vals[k] = v
end
MapMT.__len = function(m) return m._n end
MapMT.__pairs = function() error('bad argument #1 to pairs (table expected, got userdata)', 2) end

list = {}
setmetatable(list, {
  __call = function(_, t)
    local v, n = {}, 0
    if type(t) == 'table' then
      local keys = {}
      for k in next, t do
        if type(k) == 'number' then keys[#keys + 1] = k end
      end
      tsort(keys)
      for _, k in ipairs(keys) do
        n = n + 1
        v[n] = checkvalue(t[k])
      end
    end
    return newlist(v, n)
  end,
})

function list.create() return newlist({}, 0) end
list.new = list.create
function list.size(l) return checklist(l)._n end
function list.append(l, v)
  checklist(l)
  local n = l._n + 1
  l._v[n] = checkvalue(v)
  l._n = n
end
function list.prepend(l, v) list.insert(l, 1, v) end
function list.insert(l, pos, v)
  checklist(l)
  pos = toint(pos)
  if pos == nil or pos < 1 then return end
  checkvalue(v)
  local vals, n = l._v, l._n
  if pos > n then
    vals[pos] = v
    l._n = pos
    return
  end
  for i = n, pos, -1 do vals[i + 1] = vals[i] end
  vals[pos] = v
  l._n = n + 1
end
function list.remove(l, pos)
  checklist(l)
  pos = toint(pos)
  local vals, n = l._v, l._n
  if pos == nil or pos < 1 or pos > n then return end
  for i = pos, n - 1 do vals[i] = vals[i + 1] end
  vals[n] = nil
  l._n = n - 1
end
function list.trim(l, pos)
  checklist(l)
  pos = toint(pos)
  local vals, n = l._v, l._n
  if pos == nil or pos < 1 or pos > n then return end
  for i = pos, n do vals[i] = nil end
  l._n = pos - 1
end
function list.concat(l, other)
  checklist(l); checklist(other)
  local vals, n = l._v, l._n
  for i = 1, other._n do vals[n + i] = other._v[i] end
  l._n = n + other._n
end
function list.take(l, count)
  checklist(l)
  count = toint(count)
  if count == nil or count <= 0 then return nil end
  if count > l._n then count = l._n end
  local v = {}
  for i = 1, count do v[i] = l._v[i] end
  return newlist(v, count)
end
function list.drop(l, count)
  checklist(l)
  count = toint(count)
  if count == nil or count <= 0 then return nil end
  local v, n = {}, 0
  for i = count + 1, l._n do
    n = n + 1
    v[n] = l._v[i]
  end
  return newlist(v, n)
end
function list.clone(l)
  checklist(l)
  local v = {}
  for i = 1, l._n do v[i] = l._v[i] end
  return newlist(v, l._n)
end
function list.iterator(l)
  checklist(l)
  local i, vals, n = 0, l._v, l._n
  return function()
    if i >= n then return nil end
    i = i + 1
    return vals[i]
  end
end
function list.tostring(l) return listtostring(checklist(l)) end

map = {}
setmetatable(map, {
  __call = function(_, t)
    local m = newmap({}, 0)
    if type(t) == 'table' then
      for k, v in next, t do MapMT.__newindex(m, k, v) end
    end
    return m
  end,
})
function map.create() return newmap({}, 0) end
map.new = map.create
function map.size(m) return checkmap(m)._n end
function map.pairs(m) return next, checkmap(m)._v, nil end
function map.keys(m)
  local vals, k = checkmap(m)._v, nil
  return function()
    k = next(vals, k)
    return k
  end
end
function map.values(m)
  local vals, k = checkmap(m)._v, nil
  return function()
    local v
    k, v = next(vals, k)
    return v
  end
end
function map.remove(m, k)
  checkmap(m)
  MapMT.__newindex(m, k, nil)
end
function map.clone(m)
  checkmap(m)
  local v = {}
  for k, x in next, m._v do v[k] = x end
  return newmap(v, m._n)
end
function map.merge(a, b, f)
  local out = map.clone(a)
  checkmap(b)
  for k, v in next, b._v do
    local old = out._v[k]
    if old ~= nil and f then v = f(old, v) end
    MapMT.__newindex(out, k, v)
  end
  return out
end
function map.diff(a, b)
  checkmap(a); checkmap(b)
  local out = newmap({}, 0)
  for k, v in next, a._v do if b._v[k] == nil then MapMT.__newindex(out, k, v) end end
  for k, v in next, b._v do if a._v[k] == nil then MapMT.__newindex(out, k, v) end end
  return out
end
function map.tostring(m) return maptostring(checkmap(m)) end

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
