(* verirl: bundled Coq theorems for the coq_proofs environment (Coq 8.16).

   Layout read by verirl.provers.coq_theorems:
   - everything before the first theorem is the prelude every theorem shares;
   - each theorem is preceded by a comment "grade: N" and followed by its reference proof.

   Grades: 0 = one tactic (reflexivity, lia, tauto, ...); 1 = intros and one or two steps,
   or one stdlib lemma; 2 = case analysis, splitting, existentials, several rewrites;
   3 = a direct induction; 4 = induction with a stdlib lemma or generalisation;
   5 = induction with a strengthened statement, an inline helper fact or nested cases.

   The whole file compiles with coqc; the tests check every reference proof one by one. *)

Require Import Arith Lia List Bool.
Import ListNotations.

Fixpoint dbl (n : nat) : nat :=
  match n with
  | 0 => 0
  | S k => S (S (dbl k))
  end.

Fixpoint sum_list (l : list nat) : nat :=
  match l with
  | [] => 0
  | x :: t => x + sum_list t
  end.

Fixpoint sum_to (n : nat) : nat :=
  match n with
  | 0 => 0
  | S k => S k + sum_to k
  end.

Fixpoint is_even (n : nat) : bool :=
  match n with
  | 0 => true
  | 1 => false
  | S (S k) => is_even k
  end.

Fixpoint rev_acc (l acc : list nat) : list nat :=
  match l with
  | [] => acc
  | x :: t => rev_acc t (x :: acc)
  end.

Fixpoint count (x : nat) (l : list nat) : nat :=
  match l with
  | [] => 0
  | y :: t => (if Nat.eqb x y then 1 else 0) + count x t
  end.

(* ===================================================================================== *)
(* grade: 0 *)
Theorem two_plus_two : 2 + 2 = 4.
Proof. reflexivity. Qed.

(* grade: 0 *)
Theorem three_times_four : 3 * 4 = 12.
Proof. reflexivity. Qed.

(* grade: 0 *)
Theorem andb_true_true : true && true = true.
Proof. reflexivity. Qed.

(* grade: 0 *)
Theorem negb_false_true : negb false = true.
Proof. reflexivity. Qed.

(* grade: 0 *)
Theorem length_of_three : length [1; 2; 3] = 3.
Proof. reflexivity. Qed.

(* grade: 0 *)
Theorem append_small : [1; 2] ++ [3] = [1; 2; 3].
Proof. reflexivity. Qed.

(* grade: 0 *)
Theorem reverse_small : rev [1; 2; 3] = [3; 2; 1].
Proof. reflexivity. Qed.

(* grade: 0 *)
Theorem map_succ_small : map S [1; 2] = [2; 3].
Proof. reflexivity. Qed.

(* grade: 0 *)
Theorem dbl_three : dbl 3 = 6.
Proof. reflexivity. Qed.

(* grade: 0 *)
Theorem sum_list_small : sum_list [1; 2; 3; 4] = 10.
Proof. reflexivity. Qed.

(* grade: 0 *)
Theorem zero_add_any : forall n : nat, 0 + n = n.
Proof. reflexivity. Qed.

(* grade: 0 *)
Theorem add_swap_lia : forall a b : nat, a + b = b + a.
Proof. lia. Qed.

(* grade: 0 *)
Theorem le_add_right_lia : forall a b : nat, a <= a + b.
Proof. lia. Qed.

(* grade: 0 *)
Theorem lt_succ_self_lia : forall n : nat, n < S n.
Proof. lia. Qed.

(* grade: 0 *)
Theorem twice_is_sum_lia : forall n : nat, 2 * n = n + n.
Proof. lia. Qed.

(* grade: 0 *)
Theorem lt_chain_lia : forall a b c : nat, a < b -> b < c -> a < c.
Proof. lia. Qed.

(* grade: 0 *)
Theorem trivially_true : True.
Proof. trivial. Qed.

(* grade: 0 *)
Theorem implies_self : forall P : Prop, P -> P.
Proof. auto. Qed.

(* grade: 0 *)
Theorem and_swap_tauto : forall P Q : Prop, P /\ Q -> Q /\ P.
Proof. tauto. Qed.

(* grade: 0 *)
Theorem or_swap_tauto : forall P Q : Prop, P \/ Q -> Q \/ P.
Proof. tauto. Qed.

(* grade: 0 *)
Theorem zero_not_one : 0 <> 1.
Proof. discriminate. Qed.

(* grade: 0 *)
Theorem succ_not_zero : forall n : nat, S n <> 0.
Proof. discriminate. Qed.

(* ===================================================================================== *)
(* grade: 1 *)
Theorem succ_is_plus_one : forall n : nat, S n = n + 1.
Proof. intros n. lia. Qed.

(* grade: 1 *)
Theorem true_andb_left : forall b : bool, true && b = b.
Proof. intros b. reflexivity. Qed.

(* grade: 1 *)
Theorem false_orb_left : forall b : bool, false || b = b.
Proof. intros b. reflexivity. Qed.

(* grade: 1 *)
Theorem singleton_app : forall (x : nat) (l : list nat), [x] ++ l = x :: l.
Proof. intros x l. reflexivity. Qed.

(* grade: 1 *)
Theorem length_cons_succ : forall (x : nat) (l : list nat), length (x :: l) = S (length l).
Proof. intros x l. reflexivity. Qed.

(* grade: 1 *)
Theorem eq_symmetric : forall a b : nat, a = b -> b = a.
Proof.
  intros a b H.
  symmetry.
  exact H.
Qed.

(* grade: 1 *)
Theorem eq_transitive : forall a b c : nat, a = b -> b = c -> a = c.
Proof.
  intros a b c H1 H2.
  rewrite H1.
  exact H2.
Qed.

(* grade: 1 *)
Theorem add_zero_right_lemma : forall n : nat, n + 0 = n.
Proof.
  intros n.
  apply Nat.add_0_r.
Qed.

(* grade: 1 *)
Theorem mul_one_right_lemma : forall n : nat, n * 1 = n.
Proof.
  intros n.
  rewrite Nat.mul_1_r.
  reflexivity.
Qed.

(* grade: 1 *)
Theorem app_nil_right_lemma : forall l : list nat, l ++ [] = l.
Proof.
  intros l.
  apply app_nil_r.
Qed.

(* grade: 1 *)
Theorem rev_rev_lemma : forall l : list nat, rev (rev l) = l.
Proof.
  intros l.
  apply rev_involutive.
Qed.

(* grade: 1 *)
Theorem length_append_lemma : forall l1 l2 : list nat,
  length (l1 ++ l2) = length l1 + length l2.
Proof.
  intros l1 l2.
  apply app_length.
Qed.

(* grade: 1 *)
Theorem mul_distr_lemma : forall a b c : nat, a * (b + c) = a * b + a * c.
Proof.
  intros a b c.
  apply Nat.mul_add_distr_l.
Qed.

(* grade: 1 *)
Theorem modus_ponens : forall P Q : Prop, P -> (P -> Q) -> Q.
Proof.
  intros P Q HP HPQ.
  apply HPQ.
  exact HP.
Qed.

(* grade: 1 *)
Theorem or_intro_left : forall P Q : Prop, P -> P \/ Q.
Proof.
  intros P Q HP.
  left.
  exact HP.
Qed.

(* grade: 1 *)
Theorem exists_double_four : exists n : nat, n + n = 4.
Proof.
  exists 2.
  reflexivity.
Qed.

(* grade: 1 *)
Theorem rewrite_both_sides : forall n m : nat, n = m -> n + n = m + m.
Proof.
  intros n m H.
  rewrite H.
  reflexivity.
Qed.

(* grade: 1 *)
Theorem le_transitive : forall a b c : nat, a <= b -> b <= c -> a <= c.
Proof.
  intros a b c H1 H2.
  apply Nat.le_trans with b.
  - exact H1.
  - exact H2.
Qed.

(* grade: 1 *)
Theorem eqb_zero_succ : forall n : nat, Nat.eqb 0 (S n) = false.
Proof.
  intros n.
  reflexivity.
Qed.

(* grade: 1 *)
Theorem min_below_left : forall a b : nat, Nat.min a b <= a.
Proof.
  intros a b.
  lia.
Qed.

(* grade: 1 *)
Theorem in_middle : forall (x : nat) (l1 l2 : list nat), In x (l1 ++ x :: l2).
Proof.
  intros x l1 l2.
  apply in_elt.
Qed.

(* ===================================================================================== *)
(* grade: 2 *)
Theorem negb_involutive_cases : forall b : bool, negb (negb b) = b.
Proof.
  intros b.
  destruct b.
  - reflexivity.
  - reflexivity.
Qed.

(* grade: 2 *)
Theorem andb_swap_cases : forall a b : bool, a && b = b && a.
Proof.
  intros a b.
  destruct a; destruct b; reflexivity.
Qed.

(* grade: 2 *)
Theorem orb_swap_cases : forall a b : bool, a || b = b || a.
Proof.
  intros a b.
  destruct a; destruct b; reflexivity.
Qed.

(* grade: 2 *)
Theorem xorb_self_false : forall b : bool, xorb b b = false.
Proof.
  intros b.
  destruct b; reflexivity.
Qed.

(* grade: 2 *)
Theorem if_same_branches : forall (b : bool) (n : nat), (if b then n else n) = n.
Proof.
  intros b n.
  destruct b; reflexivity.
Qed.

(* grade: 2 *)
Theorem andb_true_first : forall a b : bool, a && b = true -> a = true.
Proof.
  intros a b H.
  destruct a.
  - reflexivity.
  - simpl in H. discriminate H.
Qed.

(* grade: 2 *)
Theorem orb_false_both : forall a b : bool, a || b = false -> a = false /\ b = false.
Proof.
  intros a b H.
  destruct a; destruct b; simpl in H.
  - discriminate H.
  - discriminate H.
  - discriminate H.
  - split; reflexivity.
Qed.

(* grade: 2 *)
Theorem zero_or_successor : forall n : nat, n = 0 \/ exists m, n = S m.
Proof.
  intros n.
  destruct n as [| m].
  - left. reflexivity.
  - right. exists m. reflexivity.
Qed.

(* grade: 2 *)
Theorem list_empty_or_cons : forall l : list nat, l = [] \/ exists x t, l = x :: t.
Proof.
  intros l.
  destruct l as [| x t].
  - left. reflexivity.
  - right. exists x, t. reflexivity.
Qed.

(* grade: 2 *)
Theorem leb_true_or_false : forall n m : nat, Nat.leb n m = true \/ Nat.leb n m = false.
Proof.
  intros n m.
  destruct (Nat.leb n m).
  - left. reflexivity.
  - right. reflexivity.
Qed.

(* grade: 2 *)
Theorem succ_injective : forall n m : nat, S n = S m -> n = m.
Proof.
  intros n m H.
  injection H as H'.
  exact H'.
Qed.

(* grade: 2 *)
Theorem some_not_none : forall x : nat, Some x <> None.
Proof.
  intros x H.
  discriminate H.
Qed.

(* grade: 2 *)
Theorem and_intro_both : forall P Q : Prop, P -> Q -> P /\ Q.
Proof.
  intros P Q HP HQ.
  split.
  - exact HP.
  - exact HQ.
Qed.

(* grade: 2 *)
Theorem and_regroup : forall P Q R : Prop, P /\ (Q /\ R) -> (P /\ Q) /\ R.
Proof.
  intros P Q R [HP [HQ HR]].
  split.
  - split.
    + exact HP.
    + exact HQ.
  - exact HR.
Qed.

(* grade: 2 *)
Theorem and_or_distribute : forall P Q R : Prop, P /\ (Q \/ R) -> (P /\ Q) \/ (P /\ R).
Proof.
  intros P Q R [HP [HQ | HR]].
  - left. split; assumption.
  - right. split; assumption.
Qed.

(* grade: 2 *)
Theorem contrapositive : forall P Q : Prop, (P -> Q) -> ~ Q -> ~ P.
Proof.
  intros P Q HPQ HnQ HP.
  apply HnQ.
  apply HPQ.
  exact HP.
Qed.

(* grade: 2 *)
Theorem double_negation_intro : forall P : Prop, P -> ~ ~ P.
Proof.
  intros P HP HnP.
  apply HnP.
  exact HP.
Qed.

(* grade: 2 *)
Theorem exists_flip : forall f : nat -> nat, (exists n, f n = 0) -> exists m, 0 = f m.
Proof.
  intros f [n H].
  exists n.
  symmetry.
  exact H.
Qed.

(* grade: 2 *)
Theorem add_regroup_rewrites : forall a b c d : nat, a + (b + (c + d)) = a + b + c + d.
Proof.
  intros a b c d.
  rewrite Nat.add_assoc.
  rewrite Nat.add_assoc.
  reflexivity.
Qed.

(* grade: 2 *)
Theorem head_of_nonempty : forall (l : list nat), l <> [] -> exists x, hd_error l = Some x.
Proof.
  intros l H.
  destruct l as [| x t].
  - exfalso. apply H. reflexivity.
  - exists x. reflexivity.
Qed.

(* grade: 2 *)
Theorem eqb_spec_cases : forall n m : nat, Nat.eqb n m = true -> n = m.
Proof.
  intros n m H.
  apply Nat.eqb_eq.
  exact H.
Qed.

(* ===================================================================================== *)
(* grade: 3 *)
Theorem add_zero_right_induction : forall n : nat, n + 0 = n.
Proof.
  intros n.
  induction n as [| n IH].
  - reflexivity.
  - simpl. rewrite IH. reflexivity.
Qed.

(* grade: 3 *)
Theorem add_succ_right_induction : forall n m : nat, n + S m = S (n + m).
Proof.
  intros n m.
  induction n as [| n IH].
  - reflexivity.
  - simpl. rewrite IH. reflexivity.
Qed.

(* grade: 3 *)
Theorem mul_zero_right_induction : forall n : nat, n * 0 = 0.
Proof.
  intros n.
  induction n as [| n IH].
  - reflexivity.
  - simpl. exact IH.
Qed.

(* grade: 3 *)
Theorem eqb_reflexive : forall n : nat, Nat.eqb n n = true.
Proof.
  intros n.
  induction n as [| n IH].
  - reflexivity.
  - simpl. exact IH.
Qed.

(* grade: 3 *)
Theorem leb_reflexive : forall n : nat, Nat.leb n n = true.
Proof.
  intros n.
  induction n as [| n IH].
  - reflexivity.
  - simpl. exact IH.
Qed.

(* grade: 3 *)
Theorem app_nil_right_induction : forall l : list nat, l ++ [] = l.
Proof.
  intros l.
  induction l as [| x l IH].
  - reflexivity.
  - simpl. rewrite IH. reflexivity.
Qed.

(* grade: 3 *)
Theorem app_assoc_induction : forall l1 l2 l3 : list nat,
  (l1 ++ l2) ++ l3 = l1 ++ (l2 ++ l3).
Proof.
  intros l1 l2 l3.
  induction l1 as [| x l1 IH].
  - reflexivity.
  - simpl. rewrite IH. reflexivity.
Qed.

(* grade: 3 *)
Theorem length_app_induction : forall l1 l2 : list nat,
  length (l1 ++ l2) = length l1 + length l2.
Proof.
  intros l1 l2.
  induction l1 as [| x l1 IH].
  - reflexivity.
  - simpl. rewrite IH. reflexivity.
Qed.

(* grade: 3 *)
Theorem map_length_induction : forall (f : nat -> nat) (l : list nat),
  length (map f l) = length l.
Proof.
  intros f l.
  induction l as [| x l IH].
  - reflexivity.
  - simpl. rewrite IH. reflexivity.
Qed.

(* grade: 3 *)
Theorem map_app_induction : forall (f : nat -> nat) (l1 l2 : list nat),
  map f (l1 ++ l2) = map f l1 ++ map f l2.
Proof.
  intros f l1 l2.
  induction l1 as [| x l1 IH].
  - reflexivity.
  - simpl. rewrite IH. reflexivity.
Qed.

(* grade: 3 *)
Theorem map_id_induction : forall l : list nat, map (fun x => x) l = l.
Proof.
  intros l.
  induction l as [| x l IH].
  - reflexivity.
  - simpl. rewrite IH. reflexivity.
Qed.

(* grade: 3 *)
Theorem dbl_is_add : forall n : nat, dbl n = n + n.
Proof.
  intros n.
  induction n as [| n IH].
  - reflexivity.
  - simpl. rewrite IH. lia.
Qed.

(* grade: 3 *)
Theorem sum_list_append : forall l1 l2 : list nat,
  sum_list (l1 ++ l2) = sum_list l1 + sum_list l2.
Proof.
  intros l1 l2.
  induction l1 as [| x l1 IH].
  - reflexivity.
  - simpl. rewrite IH. lia.
Qed.

(* grade: 3 *)
Theorem is_even_dbl : forall n : nat, is_even (dbl n) = true.
Proof.
  intros n.
  induction n as [| n IH].
  - reflexivity.
  - simpl. exact IH.
Qed.

(* grade: 3 *)
Theorem count_app : forall (x : nat) (l1 l2 : list nat),
  count x (l1 ++ l2) = count x l1 + count x l2.
Proof.
  intros x l1 l2.
  induction l1 as [| y l1 IH].
  - reflexivity.
  - simpl. rewrite IH. lia.
Qed.

(* grade: 3 *)
Theorem sum_to_bound : forall n : nat, n <= sum_to n.
Proof.
  intros n.
  induction n as [| n IH].
  - reflexivity.
  - simpl. lia.
Qed.

(* ===================================================================================== *)
(* grade: 4 *)
Theorem add_comm_induction : forall n m : nat, n + m = m + n.
Proof.
  intros n m.
  induction n as [| n IH].
  - simpl. rewrite Nat.add_0_r. reflexivity.
  - simpl. rewrite IH. rewrite Nat.add_succ_r. reflexivity.
Qed.

(* grade: 4 *)
Theorem rev_app_distr_induction : forall l1 l2 : list nat,
  rev (l1 ++ l2) = rev l2 ++ rev l1.
Proof.
  intros l1 l2.
  induction l1 as [| x l1 IH].
  - simpl. rewrite app_nil_r. reflexivity.
  - simpl. rewrite IH. rewrite app_assoc. reflexivity.
Qed.

(* grade: 4 *)
Theorem rev_involutive_induction : forall l : list nat, rev (rev l) = l.
Proof.
  intros l.
  induction l as [| x l IH].
  - reflexivity.
  - simpl. rewrite rev_app_distr. simpl. rewrite IH. reflexivity.
Qed.

(* grade: 4 *)
Theorem rev_length_induction : forall l : list nat, length (rev l) = length l.
Proof.
  intros l.
  induction l as [| x l IH].
  - reflexivity.
  - simpl. rewrite app_length. simpl. rewrite IH. lia.
Qed.

(* grade: 4 *)
Theorem map_rev_induction : forall (f : nat -> nat) (l : list nat),
  map f (rev l) = rev (map f l).
Proof.
  intros f l.
  induction l as [| x l IH].
  - reflexivity.
  - simpl. rewrite map_app. rewrite IH. reflexivity.
Qed.

(* grade: 4 *)
Theorem filter_length_le : forall (f : nat -> bool) (l : list nat),
  length (filter f l) <= length l.
Proof.
  intros f l.
  induction l as [| x l IH].
  - simpl. lia.
  - simpl. destruct (f x); simpl; lia.
Qed.

(* grade: 4 *)
Theorem mul_succ_right_induction : forall n m : nat, n * S m = n + n * m.
Proof.
  intros n m.
  induction n as [| n IH].
  - reflexivity.
  - simpl. rewrite IH. lia.
Qed.

(* grade: 4 *)
Theorem sum_to_formula : forall n : nat, 2 * sum_to n = n * (n + 1).
Proof.
  intros n.
  induction n as [| n IH].
  - reflexivity.
  - simpl sum_to. nia.
Qed.

(* grade: 4 *)
Theorem dbl_injective : forall n m : nat, dbl n = dbl m -> n = m.
Proof.
  intros n.
  induction n as [| n IH]; intros m H; destruct m as [| m].
  - reflexivity.
  - discriminate H.
  - discriminate H.
  - simpl in H. injection H as H. apply IH in H. rewrite H. reflexivity.
Qed.

(* grade: 4 *)
Theorem is_even_succ_negb : forall n : nat, is_even (S n) = negb (is_even n).
Proof.
  intros n.
  induction n as [| n IH].
  - reflexivity.
  - rewrite IH. simpl. rewrite negb_involutive. reflexivity.
Qed.

(* grade: 4 *)
Theorem count_le_length : forall (x : nat) (l : list nat), count x l <= length l.
Proof.
  intros x l.
  induction l as [| y l IH].
  - simpl. lia.
  - simpl. destruct (Nat.eqb x y); simpl; lia.
Qed.

(* ===================================================================================== *)
(* grade: 5 *)
Theorem rev_acc_spec : forall l acc : list nat, rev_acc l acc = rev l ++ acc.
Proof.
  intros l.
  induction l as [| x l IH]; intros acc.
  - reflexivity.
  - simpl. rewrite IH. rewrite <- app_assoc. reflexivity.
Qed.

(* grade: 5 *)
Theorem rev_acc_nil_is_rev : forall l : list nat, rev_acc l [] = rev l.
Proof.
  intros l.
  assert (H : forall acc, rev_acc l acc = rev l ++ acc).
  { induction l as [| x t IH]; intros acc.
    - reflexivity.
    - simpl. rewrite IH. rewrite <- app_assoc. reflexivity. }
  rewrite H.
  apply app_nil_r.
Qed.

(* grade: 5 *)
Theorem sum_list_rev : forall l : list nat, sum_list (rev l) = sum_list l.
Proof.
  intros l.
  assert (Happ : forall l1 l2, sum_list (l1 ++ l2) = sum_list l1 + sum_list l2).
  { intros l1 l2. induction l1 as [| y l1 IH].
    - reflexivity.
    - simpl. rewrite IH. lia. }
  induction l as [| x l IH].
  - reflexivity.
  - simpl. rewrite Happ. rewrite IH. simpl. lia.
Qed.

(* grade: 5 *)
Theorem bool_fn_thrice : forall (f : bool -> bool) (b : bool), f (f (f b)) = f b.
Proof.
  intros f b.
  destruct b; destruct (f true) eqn:Ht; destruct (f false) eqn:Hf;
    repeat (rewrite Ht || rewrite Hf); reflexivity.
Qed.

(* grade: 5 *)
Theorem mul_comm_induction : forall n m : nat, n * m = m * n.
Proof.
  intros n m.
  induction n as [| n IH].
  - simpl. rewrite Nat.mul_0_r. reflexivity.
  - simpl. rewrite IH. rewrite Nat.mul_succ_r. lia.
Qed.

(* grade: 5 *)
Theorem is_even_sum_dbl : forall n m : nat, is_even (dbl n + m) = is_even m.
Proof.
  intros n m.
  induction n as [| n IH].
  - reflexivity.
  - simpl. exact IH.
Qed.

(* grade: 5 *)
Theorem count_rev : forall (x : nat) (l : list nat), count x (rev l) = count x l.
Proof.
  intros x l.
  assert (Happ : forall l1 l2, count x (l1 ++ l2) = count x l1 + count x l2).
  { intros l1 l2. induction l1 as [| y l1 IH].
    - reflexivity.
    - simpl. rewrite IH. lia. }
  induction l as [| y l IH].
  - reflexivity.
  - simpl. rewrite Happ. rewrite IH. simpl. lia.
Qed.

(* grade: 5 *)
Theorem sum_list_map_dbl : forall l : list nat, sum_list (map dbl l) = 2 * sum_list l.
Proof.
  intros l.
  assert (Hd : forall n, dbl n = n + n).
  { intros n. induction n as [| n IHn].
    - reflexivity.
    - simpl. rewrite IHn. lia. }
  induction l as [| x l IH].
  - reflexivity.
  - simpl. rewrite IH. rewrite Hd. lia.
Qed.

(* grade: 5 *)
Theorem in_map_succ : forall (x : nat) (l : list nat), In x l -> In (S x) (map S l).
Proof.
  intros x l H.
  induction l as [| y l IH].
  - destruct H.
  - simpl in H. destruct H as [Hy | Hin].
    + left. rewrite Hy. reflexivity.
    + right. apply IH. exact Hin.
Qed.
