#!/usr/bin/perl -0777 -pi
# Rewrites Unmanaged/_withUnsafeGuaranteedRef uses into Ref (Sources/TetherCore/Runtime/Ref.swift), in place:
#   perl -0777 -pi tools/unmanaged_to_ref.pl FILE.swift ...
# The mechanical step of commit "Runtime/Ref.swift"; rerun it on a merged file whose other side
# still wrote Unmanaged (take that side, then rerun: the result compiles as the rest does).
# Not on Runtime/Ref.swift itself (the one file that wraps Unmanaged), nor on Tests/TetherCoreTests/RefTests.swift
# (it checks `word` against the raw address on purpose).
# Balanced parentheses
our $bal; $bal = qr/(?:[^()]++|\((??{$bal})\))*+/;
our $gen = qr/<[A-Za-z_.]+>/;
# fromOpaque(UnsafeRawPointer(bitPattern: E)!) -> Ref<X>(word: E)!
s/Unmanaged($gen)?\.fromOpaque\(UnsafeRawPointer\(bitPattern:\s*((??{$bal}))\)!\)/"Ref".($1\/\/"")."(word: $2)!"/ge;
s/(?<![A-Za-z_])\.fromOpaque\(UnsafeRawPointer\(bitPattern:\s*((??{$bal}))\)!\)/.init(word: $1)!/g;
s/Unmanaged($gen)?\.fromOpaque\(/"Ref".($1\/\/"")."(opaque: "/ge;
s/(?<![A-Za-z_])\.fromOpaque\(/.init(opaque: /g;
s/Unmanaged($gen)?\.passUnretained\(/"Ref".($1\/\/"")."(unretained: "/ge;
s/(?<![A-Za-z_])\.passUnretained\(/.init(unretained: /g;
s/Unmanaged($gen)?\.passRetained\(/"Ref".($1\/\/"")."(retaining: "/ge;
s/(?<![A-Za-z_])\.passRetained\(/.init(retaining: /g;
# UInt(bitPattern: E.toOpaque()) -> E.word
s/\.toOpaque\(\)/.opaque/g;
s/\.takeUnretainedValue\(\)/.object/g;
s/\.takeRetainedValue\(\)/.take()/g;
s/\b_withUnsafeGuaranteedRef\b/borrow/g;
s/\bUnmanaged</Ref</g;
s/UInt\(bitPattern: (Ref(?:<[^<>]*>)?\([^()]*\)|[\w.!\$\[\]]+)\.opaque\)/$1.word/g;
