/**
 * The first part of the embedded engine's Lua prelude (lua-prelude.ts): the locals every part uses (the standard
 * functions it keeps, the codec's type tags, integer checks) and Aerospike's bytes type.
 */
export const LUA_BYTES = String.raw`
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

-- the byte at integer index i >= 1 (nil past the end), from the table or the string form
local function byte_at(b, i)
  local t = b.t
  if t then
    if i > b.n then return nil end
    return t[i]
  end
  return (sbyte(b.s, i))
end

local function get_byte(b, i)
  checkbytes(b)
  i = toint(i)
  if i == nil or i < 1 then return nil end
  return byte_at(b, i)
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
  return byte_at(b, i)
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

`;
