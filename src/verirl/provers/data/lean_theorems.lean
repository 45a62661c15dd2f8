/-
verirl: bundled Lean 4 theorems for the lean_proofs environment (core Lean 4, no Mathlib).

Layout read by verirl.provers.lean_theorems:
- everything before the first theorem is the prelude every theorem shares (definitions only,
  no imports: the core library is enough);
- each theorem is preceded by a comment "grade: N" and followed by its reference proof, a
  tactic block after `:= by`, one top-level tactic per line, indented by two spaces.

Grades: 0 = one tactic (decide, rfl, simp, omega, exact); 1 = intro and a step, or one
library fact; 2 = case analysis, splitting, existentials, iff; 3 = a direct induction;
4 = induction after intros, with unfolding and arithmetic; 5 = a strengthened (generalised)
statement, nested case splits or a helper fact; 6 = helper lemmas proved by induction
inside the proof, then used.

Induction proofs are written with `case` blocks so that each case is its own top-level
tactic (the unit of process credit).
-/

def dbl : Nat → Nat
  | 0 => 0
  | n + 1 => dbl n + 2

def sumTo : Nat → Nat
  | 0 => 0
  | n + 1 => sumTo n + (n + 1)

def sumList : List Nat → Nat
  | [] => 0
  | x :: xs => x + sumList xs

def evenb : Nat → Bool
  | 0 => true
  | 1 => false
  | n + 2 => evenb n

def pow2 : Nat → Nat
  | 0 => 1
  | n + 1 => 2 * pow2 n

def revAcc : List Nat → List Nat → List Nat
  | [], acc => acc
  | x :: xs, acc => revAcc xs (x :: acc)

def countIn (x : Nat) : List Nat → Nat
  | [] => 0
  | y :: ys => (if x = y then 1 else 0) + countIn x ys

inductive BTree where
  | leaf : BTree
  | node : BTree → Nat → BTree → BTree

def BTree.size : BTree → Nat
  | .leaf => 0
  | .node l _ r => l.size + 1 + r.size

def BTree.mirror : BTree → BTree
  | .leaf => .leaf
  | .node l x r => .node r.mirror x l.mirror

-- ===========================================================================================
-- grade: 0
theorem two_add_two : 2 + 2 = 4 := by
  decide

-- grade: 0
theorem length_of_three : [1, 2, 3].length = 3 := by
  rfl

-- grade: 0
theorem append_small : [1, 2] ++ [3] = [1, 2, 3] := by
  rfl

-- grade: 0
theorem reverse_small : [1, 2, 3].reverse = [3, 2, 1] := by
  rfl

-- grade: 0
theorem dbl_three : dbl 3 = 6 := by
  decide

-- grade: 0
theorem sumList_small : sumList [1, 2, 3, 4] = 10 := by
  rfl

-- grade: 0
theorem evenb_ten : evenb 10 = true := by
  decide

-- grade: 0
theorem pow2_five : pow2 5 = 32 := by
  decide

-- grade: 0
theorem evenb_add_two (n : Nat) : evenb (n + 2) = evenb n := by
  rfl

-- grade: 0
theorem zero_add_simp (n : Nat) : 0 + n = n := by
  simp

-- grade: 0
theorem append_nil_simp (xs : List Nat) : xs ++ [] = xs := by
  simp

-- grade: 0
theorem add_comm_omega (a b : Nat) : a + b = b + a := by
  omega

-- grade: 0
theorem lt_trans_omega (a b c : Nat) (h1 : a < b) (h2 : b < c) : a < c := by
  omega

-- ===========================================================================================
-- grade: 1
theorem implication_self : ∀ p : Prop, p → p := by
  intro p hp
  exact hp

-- grade: 1
theorem pair_swap (p q : Prop) : p ∧ q → q ∧ p := by
  intro h
  exact ⟨h.2, h.1⟩

-- grade: 1
theorem succ_ne_zero_omega : ∀ n : Nat, n + 1 ≠ 0 := by
  intro n
  omega

-- grade: 1
theorem add_zero_rfl : ∀ n : Nat, n + 0 = n := by
  intro n
  rfl

-- grade: 1
theorem double_neg_intro (p : Prop) (hp : p) : ¬¬p := by
  intro hn
  exact hn hp

-- grade: 1
theorem or_inl_apply (p q : Prop) (hp : p) : p ∨ q := by
  apply Or.inl
  exact hp

-- grade: 1
theorem reverse_reverse_simp : ∀ xs : List Nat, xs.reverse.reverse = xs := by
  intro xs
  simp

-- grade: 1
theorem length_append_simp : ∀ xs ys : List Nat, (xs ++ ys).length = xs.length + ys.length := by
  intro xs ys
  simp

-- grade: 1
theorem add_le_add_both (a b c d : Nat) (h1 : a ≤ b) (h2 : c ≤ d) : a + c ≤ b + d + 1 := by
  have h := Nat.add_le_add h1 h2
  omega

-- ===========================================================================================
-- grade: 2
theorem not_not_bool : ∀ b : Bool, not (not b) = b := by
  intro b
  cases b
  · rfl
  · rfl

-- grade: 2
theorem and_false_bool : ∀ b : Bool, (b && false) = false := by
  intro b
  cases b
  · rfl
  · rfl

-- grade: 2
theorem exists_half : ∃ n : Nat, n + n = 10 := by
  refine ⟨5, ?_⟩
  rfl

-- grade: 2
theorem iff_flip (p q : Prop) : (p ↔ q) → (q ↔ p) := by
  intro h
  constructor
  · intro hq
    exact h.2 hq
  · intro hp
    exact h.1 hp

-- grade: 2
theorem if_le_max (a b : Nat) : (if a ≤ b then b else a) ≥ a := by
  split
  · omega
  · omega

-- grade: 2
theorem and_over_or (p q r : Prop) : p ∧ (q ∨ r) → (p ∧ q) ∨ (p ∧ r) := by
  intro h
  have hp := h.1
  cases h.2 with
  | inl hq => exact Or.inl ⟨hp, hq⟩
  | inr hr => exact Or.inr ⟨hp, hr⟩

-- grade: 2
theorem nat_zero_or_pos : ∀ n : Nat, n = 0 ∨ 0 < n := by
  intro n
  cases n with
  | zero => exact Or.inl rfl
  | succ k => exact Or.inr (Nat.succ_pos k)

-- grade: 2
theorem bool_or_comm : ∀ a b : Bool, (a || b) = (b || a) := by
  intro a b
  cases a <;> cases b <;> rfl

-- ===========================================================================================
-- grade: 3
theorem dbl_eq_two_mul : ∀ n : Nat, dbl n = 2 * n := by
  intro n
  induction n
  case zero => rfl
  case succ k ih =>
    simp only [dbl]
    omega

-- grade: 3
theorem append_nil_induction (xs : List Nat) : xs ++ [] = xs := by
  induction xs
  case nil => rfl
  case cons x xs ih => simp only [List.cons_append, ih]

-- grade: 3
theorem sumTo_ge : ∀ n : Nat, n ≤ sumTo n := by
  intro n
  induction n
  case zero => decide
  case succ k ih =>
    simp only [sumTo]
    omega

-- grade: 3
theorem pow2_pos : ∀ n : Nat, 0 < pow2 n := by
  intro n
  induction n
  case zero => decide
  case succ k ih =>
    simp only [pow2]
    omega

-- grade: 3
theorem mirror_mirror (t : BTree) : t.mirror.mirror = t := by
  induction t
  case leaf => rfl
  case node l x r ihl ihr => simp only [BTree.mirror, ihl, ihr]

-- grade: 3
theorem sumList_append (xs ys : List Nat) : sumList (xs ++ ys) = sumList xs + sumList ys := by
  induction xs
  case nil => simp [sumList]
  case cons x xs ih =>
    simp only [List.cons_append, sumList, ih]
    omega

-- ===========================================================================================
-- grade: 4
theorem length_append_induction :
    ∀ xs ys : List Nat, (xs ++ ys).length = xs.length + ys.length := by
  intro xs ys
  induction xs
  case nil => simp
  case cons x xs ih =>
    simp only [List.cons_append, List.length_cons, ih]
    omega

-- grade: 4
theorem mirror_size : ∀ t : BTree, t.mirror.size = t.size := by
  intro t
  induction t
  case leaf => rfl
  case node l x r ihl ihr =>
    simp only [BTree.mirror, BTree.size]
    omega

-- grade: 4
theorem evenb_dbl : ∀ n : Nat, evenb (dbl n) = true := by
  intro n
  induction n
  case zero => rfl
  case succ k ih =>
    simp only [dbl, evenb]
    exact ih

-- grade: 4
theorem dbl_add : ∀ a b : Nat, dbl (a + b) = dbl a + dbl b := by
  intro a b
  induction b
  case zero => rfl
  case succ k ih =>
    show dbl (a + k + 1) = dbl a + dbl (k + 1)
    simp only [dbl, ih]
    omega

-- grade: 4
theorem countIn_append :
    ∀ (x : Nat) (xs ys : List Nat), countIn x (xs ++ ys) = countIn x xs + countIn x ys := by
  intro x xs ys
  induction xs
  case nil => simp [countIn]
  case cons y zs ih =>
    simp only [List.cons_append, countIn, ih]
    omega

-- grade: 4
theorem pow2_ge_succ : ∀ n : Nat, n + 1 ≤ pow2 n := by
  intro n
  induction n
  case zero => decide
  case succ k ih =>
    simp only [pow2]
    omega

-- ===========================================================================================
-- grade: 5
theorem revAcc_eq_reverse : ∀ xs : List Nat, revAcc xs [] = xs.reverse := by
  intro xs
  have h : ∀ acc : List Nat, revAcc xs acc = xs.reverse ++ acc := by
    induction xs
    case nil =>
      intro acc
      rfl
    case cons x xs ih =>
      intro acc
      simp only [revAcc, ih, List.reverse_cons, List.append_assoc, List.cons_append,
        List.nil_append]
  rw [h]
  simp

-- grade: 5
theorem countIn_le_length : ∀ (x : Nat) (xs : List Nat), countIn x xs ≤ xs.length := by
  intro x xs
  induction xs
  case nil => simp [countIn]
  case cons y ys ih =>
    simp only [countIn, List.length_cons]
    split
    · omega
    · omega

-- grade: 5
theorem dbl_injective : ∀ a b : Nat, dbl a = dbl b → a = b := by
  have h : ∀ n : Nat, dbl n = 2 * n := by
    intro n
    induction n
    case zero => rfl
    case succ k ih =>
      simp only [dbl]
      omega
  intro a b hab
  rw [h a, h b] at hab
  omega

-- grade: 5
theorem length_revAcc :
    ∀ xs acc : List Nat, (revAcc xs acc).length = xs.length + acc.length := by
  intro xs
  induction xs
  case nil =>
    intro acc
    simp [revAcc]
  case cons x xs ih =>
    intro acc
    simp only [revAcc, ih, List.length_cons]
    omega

-- ===========================================================================================
-- grade: 6
theorem sumList_reverse : ∀ xs : List Nat, sumList xs.reverse = sumList xs := by
  have happ : ∀ ys zs : List Nat, sumList (ys ++ zs) = sumList ys + sumList zs := by
    intro ys zs
    induction ys
    case nil => simp [sumList]
    case cons y ys ih =>
      simp only [List.cons_append, sumList, ih]
      omega
  intro xs
  induction xs
  case nil => rfl
  case cons x xs ih =>
    simp only [List.reverse_cons, happ, sumList, ih]
    omega

-- grade: 6
theorem dbl_sumList : ∀ xs : List Nat, dbl (sumList xs) = sumList (xs.map dbl) := by
  have hd : ∀ n : Nat, dbl n = 2 * n := by
    intro n
    induction n
    case zero => rfl
    case succ k ih =>
      simp only [dbl]
      omega
  intro xs
  induction xs
  case nil => rfl
  case cons x xs ih =>
    rw [hd] at ih
    simp only [sumList, List.map_cons, hd]
    omega

-- grade: 6
theorem evenb_two_mul : ∀ n : Nat, evenb (2 * n) = true := by
  have hd : ∀ n : Nat, dbl n = 2 * n := by
    intro n
    induction n
    case zero => rfl
    case succ k ih =>
      simp only [dbl]
      omega
  have he : ∀ n : Nat, evenb (dbl n) = true := by
    intro n
    induction n
    case zero => rfl
    case succ k ih =>
      simp only [dbl, evenb]
      exact ih
  intro n
  rw [← hd]
  exact he n
