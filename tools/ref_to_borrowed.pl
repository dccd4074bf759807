#!/usr/bin/perl -pi
# Rewrites +0 references from `Ref` to `Borrowed` (Runtime/Borrowed.swift) for the
# types the resolve path only ever borrows: registrations, containers, plans, the
# thread's state and graph, tracers, children, singleton slots, object factories.
# Run over merged files after a merge brings new `Ref` sites of these types:
#   perl tools/ref_to_borrowed.pl $(grep -rlw Ref Sources --include=*.swift)
# Sites that own a +1 of them (the registration table's entries) are written with
# `Ref`/`AtomicRef` by hand and are left alone: the compiler flags a `release` or
# `take` on a `Borrowed`.
BEGIN { $T = qr/(?:Registration|Container|ThreadState|Plan|Graph|Resolver|Tracer|Rare|Children|SingletonSlot|ObjectFactory|ObjectCompletion|FFICall)/; }
next if $ARGV =~ m{Runtime/(?:Ref|Borrowed|AtomicRef)\.swift$};
s/\bRef<($T)>/Borrowed<$1>/g;
s/\bRef\(unretained: /Borrowed(/g;
