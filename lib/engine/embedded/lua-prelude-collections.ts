/**
 * The second part of the embedded engine's Lua prelude (lua-prelude.ts): Aerospike's list and map types.
 */
export const LUA_COLLECTIONS = String.raw`
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
-- the list's values, length and pos as an integer in 1..n, or nil when pos is out of range
local function list_at(l, pos)
  checklist(l)
  pos = toint(pos)
  local n = l._n
  if pos == nil or pos < 1 or pos > n then return nil end
  return l._v, n, pos
end
function list.remove(l, pos)
  local vals, n, p = list_at(l, pos)
  if vals == nil then return end
  for i = p, n - 1 do vals[i] = vals[i + 1] end
  vals[n] = nil
  l._n = n - 1
end
function list.trim(l, pos)
  local vals, n, p = list_at(l, pos)
  if vals == nil then return end
  for i = p, n do vals[i] = nil end
  l._n = p - 1
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

`;
